// Package apis is podline's table of API resources: for each one its
// Kubernetes group, version, kind, plural resource name, scope, subresources
// and short names. The table drives code generation (cmd/protogen writes each
// group's api.proto and gateway.yaml from it) and, at run time, discovery and
// the apiserver's generic registry. It names messages by their proto full
// name so it does not depend on the generated code.
package apis
