// Package validation checks API objects with Kubernetes' rules and reports
// every failure with its field path, as a field.ErrorList the registry
// turns into one 422 Invalid Status: object metadata (DNS-1123 names,
// label and annotation syntax and sizes, owner references), each kind's
// fields (ValidateKind: pod specs and templates, Deployments, ReplicaSets,
// Services, Endpoints, Nodes, Namespaces, ConfigMaps, Secrets, Events,
// Leases, EndpointSlices, RBAC, ResourceQuotas, PriorityClasses) and what an update
// may not change (ValidateKindUpdate: a pod's spec beyond images,
// deadlines, tolerations and gates; workload selectors; a Service's
// clusterIP; immutable ConfigMaps and Secrets; a binding's roleRef).
//
// Validation runs after mutating admission, so it sees defaulted objects:
// an empty enum (restartPolicy "", protocol "") is an error here because
// defaulting fills it in. The fuzz tests drive JSON decoding, defaulting
// and validation together (make fuzz).
package validation
