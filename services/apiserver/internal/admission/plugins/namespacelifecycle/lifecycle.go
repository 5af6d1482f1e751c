// Package namespacelifecycle is the validating plugin that keeps objects
// out of namespaces that do not exist or are being deleted, and keeps the
// system namespaces from being deleted, as Kubernetes' NamespaceLifecycle.
package namespacelifecycle

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/internal/admission"
)

// Name is the plugin's name in spans.
const Name = "NamespaceLifecycle"

// Immortal are the namespaces that may not be deleted, as in Kubernetes.
var Immortal = map[string]bool{"default": true, "kube-system": true, "kube-public": true}

// liveLookupTTL is how long after a namespace's delete its creates read
// the namespace from storage: the cache may not show it Terminating yet.
const liveLookupTTL = 30 * time.Second

// Plugin checks creates against their namespace and namespace deletes.
type Plugin struct {
	namespaces admission.Getter // the cache
	live       admission.Getter // storage
	now        func() time.Time

	mu      sync.Mutex
	deleted map[string]time.Time // namespace -> until when to read it live
}

var (
	_ admission.Validator = (*Plugin)(nil)
	_ admission.Mutator   = (*Plugin)(nil)
)

// New returns the plugin reading namespaces from the cache namespaces, and
// from live for a while after a namespace's delete, as Kubernetes' plugin
// does, so a create right after the delete is refused.
func New(namespaces, live admission.Getter) *Plugin {
	return &Plugin{namespaces: namespaces, live: live, now: time.Now, deleted: map[string]time.Time{}}
}

// Name implements admission.Validator.
func (*Plugin) Name() string { return Name }

// Admit runs the check first in the mutating phase, as Kubernetes does,
// so that a create in a missing namespace is a 404 whatever its body; it
// never changes the object.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) (bool, error) {
	return false, p.Validate(ctx, a)
}

// Validate implements admission.Validator.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Operation == admission.Delete && a.Is("", "Namespace") {
		if Immortal[a.Name] {
			return a.Forbidden("this namespace may not be deleted")
		}
		p.mu.Lock()
		p.deleted[a.Name] = p.now().Add(liveLookupTTL)
		p.mu.Unlock()
	}
	if a.Operation != admission.Create || a.Subresource != "" || !a.Resource.Namespaced {
		return nil
	}
	obj, err := p.reader(a.Namespace).Get(ctx, "", a.Namespace)
	if err != nil {
		return err
	}
	ns := obj.(*corev1.Namespace)
	if ns.GetStatus().GetPhase() == "Terminating" || ns.GetMetadata().GetDeletionTimestamp() != nil {
		return a.Forbidden(fmt.Sprintf("unable to create new content in namespace %s because it is being terminated", a.Namespace))
	}
	return nil
}

// reader is where a create's namespace is read: storage if it was deleted
// lately, else the cache.
func (p *Plugin) reader(namespace string) admission.Getter {
	p.mu.Lock()
	defer p.mu.Unlock()
	until, ok := p.deleted[namespace]
	if ok && p.now().After(until) {
		delete(p.deleted, namespace)
		ok = false
	}
	if ok {
		return p.live
	}
	return p.namespaces
}
