package endpointslice

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"

	corev1 "podline.dev/proto/core/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
	"podline.dev/services/controller-manager/internal/controller/backends"
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
		if !backends.Include(pod) {
			continue
		}
		ports := endpointPorts(backends.Ports(svc, pod))
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

func endpointFor(svc *corev1.Service, pod *corev1.Pod) *discoveryv1.Endpoint {
	st := backends.StateOf(svc, pod)
	ep := &discoveryv1.Endpoint{
		Addresses:  []string{pod.GetStatus().GetPodIp()},
		Conditions: &discoveryv1.EndpointConditions{Ready: proto.Bool(st.Ready), Serving: proto.Bool(st.Serving), Terminating: proto.Bool(st.Terminating)},
		TargetRef:  backends.TargetRef(pod),
	}
	if n := pod.GetSpec().GetNodeName(); n != "" {
		ep.NodeName = proto.String(n)
	}
	if h := backends.Hostname(svc, pod); h != "" {
		ep.Hostname = proto.String(h)
	}
	return ep
}

// endpointPorts are a pod's resolved Service ports as a slice lists them.
func endpointPorts(ports []backends.Port) []*discoveryv1.EndpointPort {
	var out []*discoveryv1.EndpointPort
	for _, p := range ports {
		out = append(out, &discoveryv1.EndpointPort{Name: proto.String(p.Name), Protocol: proto.String(p.Protocol),
			Port: proto.Int32(p.Port), AppProtocol: p.AppProtocol})
	}
	return out
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
