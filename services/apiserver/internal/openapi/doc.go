// Package openapi describes podline's API in OpenAPI, generated at start
// from the proto descriptors of the kinds in podline.dev/proto/apis: v3
// documents per group-version (/openapi/v3/api/v1,
// /openapi/v3/apis/apps/v1, ...) with an index at /openapi/v3, and one v2
// document (/openapi/v2). kubectl reads them for `kubectl explain`, to learn
// that the server validates fields itself (the fieldValidation parameter of
// each PATCH operation), and for the merge keys of strategic merge patches.
//
// schema.go turns messages into schemas named as Kubernetes names its
// definitions (io.k8s.api.core.v1.Pod), with JSON field names, Kubernetes'
// scalar forms for the meta types, and x-kubernetes-group-version-kind on
// kinds, and the descriptions of messages and fields that `make proto`
// gathers from the leading comments in proto/*/v1/types.proto
// (podline.dev/proto/all.Descriptions); extensions.go holds what a descriptor cannot say (merge keys and
// patch strategies, quantities, required fields); paths.go writes each
// resource's operations; document.go assembles the documents.
package openapi
