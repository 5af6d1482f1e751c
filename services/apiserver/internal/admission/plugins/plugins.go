// Package plugins wires podline's admission plugins into one chain, in
// Kubernetes' order; each plugin lives in its own folder below.
package plugins

import (
	"podline.dev/services/apiserver/internal/admission"
	"podline.dev/services/apiserver/internal/admission/plugins/defaulting"
	"podline.dev/services/apiserver/internal/admission/plugins/namespacelifecycle"
	"podline.dev/services/apiserver/internal/admission/plugins/noderestriction"
	"podline.dev/services/apiserver/internal/admission/plugins/podsecurity"
	"podline.dev/services/apiserver/internal/admission/plugins/priority"
	"podline.dev/services/apiserver/internal/admission/plugins/resourcequota"
	"podline.dev/services/apiserver/internal/admission/plugins/serviceaccount"
	"podline.dev/services/apiserver/internal/admission/plugins/tolerationseconds"
)

// Sources are the objects plugins read, each from the apiserver's own
// registries (their watch caches).
type Sources struct {
	Namespaces      admission.Getter
	LiveNamespaces  admission.Getter // storage, for reads the cache may not answer yet
	ServiceAccounts admission.Getter
	PriorityClasses interface {
		admission.Getter
		admission.Lister
	}
	ResourceQuotas admission.Lister
	// LiveResourceQuotas are read from etcd, and QuotaStatus charges them.
	LiveResourceQuotas admission.Lister
	QuotaStatus        resourcequota.StatusWriter
	// Pods are read from etcd (quota usage must count the latest pods);
	// CachedPods from the watch cache, where a moment's lag is fine.
	Pods       admission.Lister
	CachedPods admission.Lister
}

// NewChain returns the chain of every plugin.
func NewChain(src Sources) *admission.Chain {
	return &admission.Chain{
		Mutating: []admission.Mutator{
			namespacelifecycle.New(src.Namespaces, src.LiveNamespaces),
			defaulting.New(),
			serviceaccount.New(src.ServiceAccounts),
			tolerationseconds.New(),
			priority.New(src.PriorityClasses),
		},
		Validating: []admission.Validator{
			noderestriction.New(),
			podsecurity.New(src.Namespaces, src.CachedPods),
			resourcequota.New(resourcequota.Sources{Quotas: src.ResourceQuotas, LiveQuotas: src.LiveResourceQuotas,
				Pods: src.Pods, Status: src.QuotaStatus}),
		},
	}
}
