package endpointslice

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"

	corev1 "podline.dev/proto/core/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
	"podline.dev/services/controller-manager/internal/controller"
)

// Labels on every slice the controller manages.
const (
	LabelServiceName = "kubernetes.io/service-name"
	LabelManagedBy   = "endpointslice.kubernetes.io/managed-by"
	ManagedByValue   = "endpointslice-controller.k8s.io"
)

// group is the endpoints that share an address type and ports.
type group struct {
	addressType string
	ports       []*discoveryv1.EndpointPort
	endpoints   []*discoveryv1.Endpoint
}

func (g group) key() string { return groupKey(g.addressType, g.ports) }

func groupKey(addressType string, ports []*discoveryv1.EndpointPort) string {
	parts := []string{addressType}
	for _, p := range ports {
		parts = append(parts, fmt.Sprintf("%s/%s/%d/%s", p.GetName(), p.GetProtocol(), p.GetPort(), p.GetAppProtocol()))
	}
	return strings.Join(parts, ",")
}

// desiredGroups computes the endpoints of svc from pods, grouped by
// address type and ports, each group's endpoints ordered by pod name. With
// no endpoint at all it returns one empty IPv4 group: the placeholder.
func desiredGroups(svc *corev1.Service, pods []*corev1.Pod) []group {
	byKey := map[string]*group{}
	var keys []string
	for _, pod := range pods {
		if !shouldBeEndpoint(pod) {
			continue
		}
		ports := endpointPorts(svc, pod)
		ip := pod.GetStatus().GetPodIp()
		addressType := "IPv4"
		if strings.Contains(ip, ":") {
			addressType = "IPv6"
		}
		k := groupKey(addressType, ports)
		g, ok := byKey[k]
		if !ok {
			g = &group{addressType: addressType, ports: ports}
			byKey[k] = g
			keys = append(keys, k)
		}
		g.endpoints = append(g.endpoints, endpointFor(svc, pod))
	}
	if len(keys) == 0 {
		return []group{{addressType: "IPv4"}}
	}
	sort.Strings(keys)
	out := make([]group, 0, len(keys))
	for _, k := range keys {
		g := byKey[k]
		sort.SliceStable(g.endpoints, func(i, j int) bool {
			return g.endpoints[i].GetTargetRef().GetName() < g.endpoints[j].GetTargetRef().GetName()
		})
		out = append(out, *g)
	}
	return out
}

// shouldBeEndpoint: the pod has an IP and has not finished.
func shouldBeEndpoint(pod *corev1.Pod) bool {
	if pod.GetStatus().GetPodIp() == "" {
		return false
	}
	switch pod.GetStatus().GetPhase() {
	case controller.PodSucceeded, controller.PodFailed:
		return false
	}
	return true
}

func endpointFor(svc *corev1.Service, pod *corev1.Pod) *discoveryv1.Endpoint {
	serving := controller.IsPodReady(pod)
	terminating := pod.GetMetadata().GetDeletionTimestamp() != nil
	ready := svc.GetSpec().GetPublishNotReadyAddresses() || (serving && !terminating)
	ep := &discoveryv1.Endpoint{
		Addresses:  []string{pod.GetStatus().GetPodIp()},
		Conditions: &discoveryv1.EndpointConditions{Ready: proto.Bool(ready), Serving: proto.Bool(serving), Terminating: proto.Bool(terminating)},
		TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: pod.GetMetadata().GetNamespace(),
			Name: pod.GetMetadata().GetName(), Uid: pod.GetMetadata().GetUid()},
	}
	if n := pod.GetSpec().GetNodeName(); n != "" {
		ep.NodeName = proto.String(n)
	}
	if h := pod.GetSpec().GetHostname(); h != "" && pod.GetSpec().GetSubdomain() == svc.GetMetadata().GetName() && svc.GetSpec().GetClusterIp() == "None" {
		ep.Hostname = proto.String(h)
	}
	return ep
}

// endpointPorts resolves each Service port in pod; a named targetPort the
// pod does not have leaves that port out.
func endpointPorts(svc *corev1.Service, pod *corev1.Pod) []*discoveryv1.EndpointPort {
	var out []*discoveryv1.EndpointPort
	for _, sp := range svc.GetSpec().GetPorts() {
		port, ok := findPort(pod, sp)
		if !ok {
			continue
		}
		protocol := sp.GetProtocol()
		if protocol == "" {
			protocol = "TCP"
		}
		ep := &discoveryv1.EndpointPort{Name: proto.String(sp.GetName()), Protocol: proto.String(protocol), Port: proto.Int32(port)}
		if sp.AppProtocol != nil {
			ep.AppProtocol = proto.String(sp.GetAppProtocol())
		}
		out = append(out, ep)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

func findPort(pod *corev1.Pod, sp *corev1.ServicePort) (int32, bool) {
	tp := sp.GetTargetPort()
	if tp.GetType() == 1 {
		protocol := sp.GetProtocol()
		if protocol == "" {
			protocol = "TCP"
		}
		for _, c := range pod.GetSpec().GetContainers() {
			for _, p := range c.GetPorts() {
				pp := p.GetProtocol()
				if pp == "" {
					pp = "TCP"
				}
				if p.GetName() == tp.GetStrVal() && pp == protocol {
					return p.GetContainerPort(), true
				}
			}
		}
		return 0, false
	}
	if tp.GetIntVal() != 0 {
		return tp.GetIntVal(), true
	}
	return sp.GetPort(), true
}

// chunk splits endpoints into slices of at most n.
func chunk(eps []*discoveryv1.Endpoint, n int) [][]*discoveryv1.Endpoint {
	if len(eps) == 0 {
		return [][]*discoveryv1.Endpoint{nil}
	}
	var out [][]*discoveryv1.Endpoint
	for len(eps) > 0 {
		k := min(n, len(eps))
		out = append(out, slices.Clone(eps[:k]))
		eps = eps[k:]
	}
	return out
}
