package endpoints

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/controller-manager/internal/controller/backends"
)

// LabelHeadless marks the Endpoints of a headless Service.
const LabelHeadless = "service.kubernetes.io/headless"

// address is one pod's address and whether it takes traffic.
type address struct {
	addr  *corev1.EndpointAddress
	ready bool
}

// portless stands for "no ports": the bare addresses of a headless
// Service without ports.
var portless = backends.Port{Port: -1}

// desiredSubsets computes svc's subsets from the pods its selector
// matches: every resolved port with the addresses that serve it, then the
// ports grouped by identical address sets into one subset each. Addresses
// are ordered by IP, ports by name, subsets by their first port.
func desiredSubsets(svc *corev1.Service, pods []*corev1.Pod) []*corev1.EndpointSubset {
	publishNotReady := svc.GetSpec().GetPublishNotReadyAddresses()
	byPort := map[string]map[string]address{}
	ports := map[string]backends.Port{}
	add := func(p backends.Port, a address) {
		k := portKey(p)
		if byPort[k] == nil {
			byPort[k], ports[k] = map[string]address{}, p
		}
		ak := a.addr.GetIp() + "/" + a.addr.GetTargetRef().GetUid()
		if old, ok := byPort[k][ak]; !ok || !old.ready {
			byPort[k][ak] = a
		}
	}
	for _, pod := range pods {
		st := backends.StateOf(svc, pod)
		if !backends.Include(pod) || (st.Terminating && !publishNotReady) {
			continue
		}
		a := address{addr: endpointAddress(svc, pod), ready: st.Ready}
		if len(svc.GetSpec().GetPorts()) == 0 {
			if svc.GetSpec().GetClusterIp() == "None" {
				add(portless, a)
			}
			continue
		}
		for _, p := range backends.Ports(svc, pod) {
			add(p, a)
		}
	}

	// Ports that share an address set share a subset.
	type subset struct {
		addrs []address
		ports []backends.Port
	}
	bySet := map[string]*subset{}
	for k, addrs := range byPort {
		set := addressSet(addrs)
		s, ok := bySet[set]
		if !ok {
			s = &subset{addrs: slices.Collect(maps.Values(addrs))}
			bySet[set] = s
		}
		if ports[k] != portless {
			s.ports = append(s.ports, ports[k])
		}
	}
	var out []*corev1.EndpointSubset
	for _, s := range bySet {
		slices.SortFunc(s.addrs, func(a, b address) int {
			return cmp.Or(strings.Compare(a.addr.GetIp(), b.addr.GetIp()), strings.Compare(a.addr.GetTargetRef().GetName(), b.addr.GetTargetRef().GetName()))
		})
		slices.SortFunc(s.ports, func(a, b backends.Port) int { return strings.Compare(portKey(a), portKey(b)) })
		es := &corev1.EndpointSubset{}
		for _, a := range s.addrs {
			if a.ready {
				es.Addresses = append(es.Addresses, a.addr)
			} else {
				es.NotReadyAddresses = append(es.NotReadyAddresses, a.addr)
			}
		}
		for _, p := range s.ports {
			es.Ports = append(es.Ports, &corev1.EndpointPort{Name: p.Name, Port: p.Port, Protocol: p.Protocol, AppProtocol: p.AppProtocol})
		}
		out = append(out, es)
	}
	slices.SortFunc(out, func(a, b *corev1.EndpointSubset) int { return strings.Compare(subsetKey(a), subsetKey(b)) })
	return out
}

func endpointAddress(svc *corev1.Service, pod *corev1.Pod) *corev1.EndpointAddress {
	a := &corev1.EndpointAddress{Ip: pod.GetStatus().GetPodIp(), Hostname: backends.Hostname(svc, pod), TargetRef: backends.TargetRef(pod)}
	if n := pod.GetSpec().GetNodeName(); n != "" {
		a.NodeName = proto.String(n)
	}
	return a
}

func portKey(p backends.Port) string {
	app := "-"
	if p.AppProtocol != nil {
		app = "=" + *p.AppProtocol
	}
	return fmt.Sprintf("%s/%s/%d/%s", p.Name, p.Protocol, p.Port, app)
}

// addressSet names a set of addresses with their readiness, whatever its order.
func addressSet(addrs map[string]address) string {
	keys := make([]string, 0, len(addrs))
	for k, a := range addrs {
		keys = append(keys, fmt.Sprintf("%s/%t", k, a.ready))
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}

// subsetKey orders subsets: by their first port, then their first address.
func subsetKey(s *corev1.EndpointSubset) string {
	var k string
	if len(s.GetPorts()) > 0 {
		p := s.GetPorts()[0]
		k = fmt.Sprintf("%s/%s/%d", p.GetName(), p.GetProtocol(), p.GetPort())
	}
	for _, list := range [][]*corev1.EndpointAddress{s.GetAddresses(), s.GetNotReadyAddresses()} {
		if len(list) > 0 {
			return k + "|" + list[0].GetIp()
		}
	}
	return k
}

// desiredLabels are the Service's labels, with the headless label on the
// Endpoints of a headless Service and never on another's.
func desiredLabels(svc *corev1.Service) map[string]string {
	l := maps.Clone(svc.GetMetadata().GetLabels())
	if l == nil {
		l = map[string]string{}
	}
	if svc.GetSpec().GetClusterIp() == "None" {
		l[LabelHeadless] = ""
	} else {
		delete(l, LabelHeadless)
	}
	return l
}

// MaxCapacity is the most addresses an Endpoints lists; beyond it the
// subsets are truncated and the Endpoints says so with AnnotationOverCapacity.
const MaxCapacity = 1000

// AnnotationOverCapacity ("truncated") marks an Endpoints whose Service has
// more endpoints than it lists.
const AnnotationOverCapacity = "endpoints.kubernetes.io/over-capacity"

// truncate cuts subsets down to MaxCapacity addresses, as Kubernetes does:
// ready addresses are kept before not-ready ones, and each subset keeps a
// share proportional to its size, rounded up, until the capacity is used.
// It reports whether anything was cut.
func truncate(subsets []*corev1.EndpointSubset) bool {
	ready, notReady := 0, 0
	for _, s := range subsets {
		ready += len(s.GetAddresses())
		notReady += len(s.GetNotReadyAddresses())
	}
	if ready+notReady <= MaxCapacity {
		return false
	}
	truncateReady := ready > MaxCapacity
	room, total := MaxCapacity-ready, notReady
	if truncateReady {
		room, total = MaxCapacity, ready
	}
	left := room
	for _, s := range subsets {
		n := len(s.NotReadyAddresses)
		if truncateReady {
			n = len(s.Addresses)
		}
		share := min((n*room+total-1)/total, left)
		if truncateReady {
			s.Addresses = s.Addresses[:min(share, len(s.Addresses))]
			s.NotReadyAddresses = nil
			left -= len(s.Addresses)
		} else {
			s.NotReadyAddresses = s.NotReadyAddresses[:min(share, len(s.NotReadyAddresses))]
			left -= len(s.NotReadyAddresses)
		}
	}
	return true
}
