// Package field describes validation failures of single fields: a path in
// Kubernetes' form (spec.template.spec.containers[0].image), an error type
// (Required, Invalid, NotSupported, ...) and a detail. Lists of them become
// the causes of an Invalid Status in package apierrors.
package field
