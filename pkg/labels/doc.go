// Package labels is Kubernetes' label selector language: parsing the string
// form that kubectl -l and the API's labelSelector parameter carry
// ("app=web,tier!=db", "env in (prod,staging)", "!canary", "release"),
// turning the structured metav1.LabelSelector of Deployments and ReplicaSets
// into the same Selector, and matching either against an object's labels.
//
// A Selector is a conjunction of Requirements, each a key, an Operator and
// values; String renders it canonically (requirements sorted by key) so that
// Parse(s.String()) gives the same selector back. Parsing and validation
// errors wrap ErrInvalidSelector and say what was expected where, so the
// apiserver can return them to users as they are; ValidateLabelSelector
// reports a bad metav1.LabelSelector as field errors with Kubernetes paths.
// ValidateKey and ValidateValue are the label key and value rules that
// metadata.labels must follow as well.
package labels
