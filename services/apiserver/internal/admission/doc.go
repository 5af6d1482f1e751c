// Package admission is the apiserver's admission chain, in Kubernetes'
// order: mutating plugins change the object a write carries (defaults, the
// service account's token volume, toleration seconds, priority), then schema
// validation checks it (the registry's validation, passed in as a func),
// then validating plugins accept or refuse it without changing it
// (namespace lifecycle, pod security, quota, node restriction).
//
// A plugin is a small type with a Name; it sees the write as Attributes
// (operation, resource, old and new object, the user from the request
// context) and returns an API error to refuse it. The chain records on an
// "admission" span, one per phase, which plugins mutated and which denied
// and why, and sends the plugins' warnings back as "warning" response
// metadata, which the REST layer turns into Warning headers. The plugins
// themselves live in admission/plugins, one folder each; they read other
// objects only through the narrow Getter and Lister interfaces here.
package admission
