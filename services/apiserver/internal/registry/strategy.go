package registry

import (
	"slices"

	"podline.dev/pkg/field"
	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/internal/admission/plugins/defaulting"
)

// Strategy is what differs between kinds. The zero Strategy is the default:
// status is cleared on create, deletion is immediate, only metadata is validated.
type Strategy struct {
	// InitStatus sets the status of a new object; nil clears it.
	InitStatus func(obj object.Object)
	// KeepStatusOnCreate lets the creator set status (nodes register with theirs).
	KeepStatusOnCreate bool
	// GracePeriod returns how long deletion waits (0: at once), given the
	// grace period the client asked for (nil: the object's default).
	GracePeriod func(obj object.Object, requested *int64) int64
	// Validate checks a new or updated object beyond its metadata.
	Validate func(obj object.Object) field.ErrorList
	// PrepareForCreate sets what the server owns on a new object.
	PrepareForCreate func(obj object.Object)
	// PrepareForUpdate carries into next, before admission, what the
	// server set on cur and a client may leave out (a Service's ClusterIP).
	PrepareForUpdate func(next, cur object.Object)
	// HoldsDeletion reports whether something beyond metadata.finalizers
	// keeps a deleted object (a namespace's spec.finalizers).
	HoldsDeletion func(obj object.Object) bool
	// MarkDeleting records on an object that its deletion has begun.
	MarkDeleting func(obj object.Object)
}

// NamespaceFinalizer is the spec finalizer of every namespace.
const NamespaceFinalizer = "kubernetes"

// Strategies holds the kinds that differ from the default, by kind.
var Strategies = map[string]Strategy{
	"Pod": {
		InitStatus: func(obj object.Object) {
			obj.(*corev1.Pod).Status = &corev1.PodStatus{Phase: "Pending"}
		},
		GracePeriod: podGracePeriod,
	},
	// A namespace is created with the "kubernetes" finalizer in its spec;
	// deleting it makes it Terminating until the namespace controller has
	// deleted its contents and removed that finalizer, as in Kubernetes.
	"Namespace": {
		InitStatus: func(obj object.Object) {
			obj.(*corev1.Namespace).Status = &corev1.NamespaceStatus{Phase: "Active"}
		},
		PrepareForCreate: func(obj object.Object) {
			ns := obj.(*corev1.Namespace)
			if ns.Spec == nil {
				ns.Spec = &corev1.NamespaceSpec{}
			}
			if !slices.Contains(ns.Spec.Finalizers, NamespaceFinalizer) {
				ns.Spec.Finalizers = append(ns.Spec.Finalizers, NamespaceFinalizer)
			}
		},
		HoldsDeletion: func(obj object.Object) bool {
			return len(obj.(*corev1.Namespace).GetSpec().GetFinalizers()) > 0
		},
		MarkDeleting: func(obj object.Object) {
			ns := obj.(*corev1.Namespace)
			if ns.Status == nil {
				ns.Status = &corev1.NamespaceStatus{}
			}
			ns.Status.Phase = "Terminating"
		},
	},
	"Node": {KeepStatusOnCreate: true},
	"Service": {
		PrepareForCreate: func(obj object.Object) { normalizeClusterIPs(obj.(*corev1.Service), nil) },
		PrepareForUpdate: func(next, cur object.Object) {
			svc, old := next.(*corev1.Service), cur.(*corev1.Service)
			dropTypeDependentFields(svc, old)
			patchAllocatedValues(svc, old)
			normalizeClusterIPs(svc, old)
		},
	},
}

// podGracePeriod follows Kubernetes: a pod not yet bound to a node, or one
// that has finished, goes at once; otherwise the kubelet gets the requested
// grace period or the pod's terminationGracePeriodSeconds. Defaulting sets
// that on every pod it admits; a pod stored before it did gets the default.
func podGracePeriod(obj object.Object, requested *int64) int64 {
	pod := obj.(*corev1.Pod)
	if pod.GetSpec().GetNodeName() == "" {
		return 0
	}
	switch pod.GetStatus().GetPhase() {
	case "Succeeded", "Failed":
		return 0
	}
	if requested != nil {
		return max(*requested, 0)
	}
	if pod.GetSpec() != nil && pod.Spec.TerminationGracePeriodSeconds != nil {
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return defaulting.DefaultTerminationGracePeriodSeconds
}
