package controller

import (
	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/client/workqueue"
	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
)

// NamespaceActive is the phase of a namespace that is not being deleted.
const NamespaceActive = "Active"

// ActiveNamespace reports whether ns takes new content: not being deleted.
func ActiveNamespace(ns *corev1.Namespace) bool {
	if ns.GetMetadata().GetDeletionTimestamp() != nil {
		return false
	}
	ph := ns.GetStatus().GetPhase()
	return ph == "" || ph == NamespaceActive
}

// EnqueueNamespaces queues the name of every namespace added or updated,
// for a controller that keeps something in each namespace.
func EnqueueNamespaces(c *Context, q workqueue.Interface[string]) (cache.ResourceEventHandlerRegistration, error) {
	return Informer[*corev1.Namespace](c).AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o object.Object) { Enqueue(q, o) },
		UpdateFunc: func(_, o object.Object) { Enqueue(q, o) },
	})
}

// GetActiveNamespace reads the namespace named name from lister; ns is
// nil, with no error, when it is gone or not Active.
func GetActiveNamespace(lister cache.Lister[*corev1.Namespace], name string) (*corev1.Namespace, error) {
	ns, err := lister.Get("", name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil || !ActiveNamespace(ns) {
		return nil, err
	}
	return ns, nil
}
