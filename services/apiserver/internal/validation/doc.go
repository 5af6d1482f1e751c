// Package validation checks API objects with Kubernetes' rules and reports
// every failure with its field path: object metadata (DNS-1123 names, label
// and annotation syntax, immutable fields) and each kind's required fields.
package validation
