// Package audit writes the apiserver's audit log, as kube-apiserver's
// audit backend does: one JSON line (an audit.k8s.io/v1 Event, plus the
// request's trace id and latency) per stage of each request (RequestReceived,
// ResponseStarted for watches, ResponseComplete), at the level the Policy
// gives the request: None (nothing), Metadata (user, verb, resource,
// namespace, name, response code), Request (and the request's object) or
// RequestResponse (and the response's). The policy's rules are matched in
// order on user, groups, verbs, resources, namespaces and non-resource
// URLs; the first match decides.
package audit
