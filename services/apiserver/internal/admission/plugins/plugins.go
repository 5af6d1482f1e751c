// Package plugins wires podline's admission plugins into one chain, in
// Kubernetes' order; each plugin lives in its own folder below.
package plugins

import (
	"podline.dev/services/apiserver/internal/admission"
	"podline.dev/services/apiserver/internal/admission/plugins/defaulting"
	"podline.dev/services/apiserver/internal/admission/plugins/namespacelifecycle"
	"podline.dev/services/apiserver/internal/admission/plugins/serviceaccount"
	"podline.dev/services/apiserver/internal/admission/plugins/tolerationseconds"
)

// Sources are the objects plugins read, each from the apiserver's own
// registries (their watch caches).
type Sources struct {
	Namespaces      admission.Getter
	ServiceAccounts admission.Getter
}

// NewChain returns the chain of every plugin.
func NewChain(src Sources) *admission.Chain {
	return &admission.Chain{
		Mutating: []admission.Mutator{
			defaulting.New(),
			serviceaccount.New(src.ServiceAccounts),
			tolerationseconds.New(),
		},
		Validating: []admission.Validator{
			namespacelifecycle.New(src.Namespaces),
		},
	}
}
