package backends

import (
	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/labels"
	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/controller-manager/internal/controller"
)

// Managed reports whether the endpoints controllers publish svc's
// endpoints: it has a selector and is not an ExternalName Service. The
// endpoints of a Service without a selector are written by hand.
func Managed(svc *corev1.Service) bool {
	return len(svc.GetSpec().GetSelector()) > 0 && svc.GetSpec().GetType() != "ExternalName"
}

// Selector is svc's selector over Pod labels.
func Selector(svc *corev1.Service) labels.Selector {
	return labels.SelectorFromSet(svc.GetSpec().GetSelector())
}

// ServicesOf lists the managed Services of the Pod's namespace whose
// selector matches the Pod before or after a change; either may be nil (an
// add or a delete), or a tombstone of a Pod.
func ServicesOf(services cache.Lister[*corev1.Service], oldObj, newObj object.Object) []*corev1.Service {
	var ns string
	var sets []labels.Set
	for _, o := range []object.Object{oldObj, newObj} {
		if o == nil {
			continue
		}
		pod, ok := cache.As[*corev1.Pod](o)
		if !ok {
			continue
		}
		ns = pod.GetMetadata().GetNamespace()
		sets = append(sets, pod.GetMetadata().GetLabels())
	}
	if len(sets) == 0 {
		return nil
	}
	svcs, err := services.Namespace(ns).List(nil)
	if err != nil {
		return nil
	}
	var out []*corev1.Service
	for _, svc := range svcs {
		if !Managed(svc) {
			continue
		}
		s := Selector(svc)
		for _, set := range sets {
			if s.Matches(set) {
				out = append(out, svc)
				break
			}
		}
	}
	return out
}

// Include reports whether a selected pod is an endpoint at all: it has an
// IP and has not finished.
func Include(pod *corev1.Pod) bool {
	if pod.GetStatus().GetPodIp() == "" {
		return false
	}
	switch pod.GetStatus().GetPhase() {
	case controller.PodSucceeded, controller.PodFailed:
		return false
	}
	return true
}

// State is an endpoint's conditions, as EndpointSlices name them.
type State struct {
	// Serving: the pod is Ready, whether terminating or not.
	Serving bool
	// Terminating: the pod is being deleted.
	Terminating bool
	// Ready: the endpoint takes traffic: serving and not terminating, or
	// any endpoint at all when the Service publishes not-ready addresses.
	Ready bool
}

// StateOf is the pod's state as an endpoint of svc.
func StateOf(svc *corev1.Service, pod *corev1.Pod) State {
	serving := controller.IsPodReady(pod)
	terminating := pod.GetMetadata().GetDeletionTimestamp() != nil
	return State{
		Serving:     serving,
		Terminating: terminating,
		Ready:       svc.GetSpec().GetPublishNotReadyAddresses() || (serving && !terminating),
	}
}

// Hostname is the pod's hostname as an endpoint of svc: set when the pod
// names a hostname and names svc as its subdomain, "" otherwise.
func Hostname(svc *corev1.Service, pod *corev1.Pod) string {
	if pod.GetSpec().GetSubdomain() != svc.GetMetadata().GetName() || pod.GetMetadata().GetNamespace() != svc.GetMetadata().GetNamespace() {
		return ""
	}
	return pod.GetSpec().GetHostname()
}

// TargetRef refers to the pod behind an endpoint.
func TargetRef(pod *corev1.Pod) *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: "Pod", Namespace: pod.GetMetadata().GetNamespace(),
		Name: pod.GetMetadata().GetName(), Uid: pod.GetMetadata().GetUid()}
}
