package proxier

import (
	"cmp"
	"net/netip"
	"slices"
	"strings"
	"time"

	corev1 "podline.dev/proto/core/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
	"podline.dev/services/proxy/internal/rules"
)

// LabelServiceName is the EndpointSlice label naming its Service.
const LabelServiceName = "kubernetes.io/service-name"

// ServiceFrom is what the rules see of svc and its EndpointSlices, or nil
// when the proxy ignores svc: ExternalName, headless (clusterIP None) or
// without an IPv4 ClusterIP. Each Service port's endpoints come from the
// slice port of the same name and protocol, which carries the target port
// the EndpointSlice controller resolved (a named targetPort may be a
// different number on each Pod). Endpoints are sorted by address and port,
// so the same backends always give the same rules.
func ServiceFrom(svc *corev1.Service, slices_ []*discoveryv1.EndpointSlice) *rules.Service {
	spec := svc.GetSpec()
	if spec.GetType() == "ExternalName" {
		return nil
	}
	ip := clusterIPv4(spec)
	if ip == "" {
		return nil
	}
	out := &rules.Service{
		Namespace: svc.GetMetadata().GetNamespace(),
		Name:      svc.GetMetadata().GetName(),
		ClusterIP: ip,
	}
	if spec.GetSessionAffinity() == "ClientIP" {
		out.AffinityTimeout = rules.DefaultAffinityTimeout
		if t := spec.GetSessionAffinityConfig().GetClientIp().TimeoutSeconds; t != nil && *t > 0 {
			out.AffinityTimeout = time.Duration(*t) * time.Second
		}
	}
	nodePorts := spec.GetType() == "NodePort" || spec.GetType() == "LoadBalancer"
	for _, sp := range spec.GetPorts() {
		proto := protocol(sp.GetProtocol())
		p := rules.Port{Name: sp.GetName(), Protocol: strings.ToLower(proto), Port: sp.GetPort()}
		if nodePorts {
			p.NodePort = sp.GetNodePort()
		}
		for _, sl := range slices_ {
			if at := sl.GetAddressType(); at != "" && at != "IPv4" {
				continue
			}
			port, ok := slicePort(sl, sp.GetName(), proto)
			if !ok {
				continue
			}
			for _, ep := range sl.GetEndpoints() {
				if len(ep.GetAddresses()) == 0 {
					continue
				}
				a, err := netip.ParseAddr(ep.GetAddresses()[0])
				if err != nil || !a.Is4() {
					continue
				}
				p.Endpoints = append(p.Endpoints, endpoint(a.String(), port, ep.GetConditions()))
			}
		}
		slices.SortFunc(p.Endpoints, func(a, b rules.Endpoint) int {
			return cmp.Or(cmp.Compare(a.IP, b.IP), cmp.Compare(a.Port, b.Port))
		})
		out.Ports = append(out.Ports, p)
	}
	return out
}

func clusterIPv4(spec *corev1.ServiceSpec) string {
	ips := spec.GetClusterIps()
	if len(ips) == 0 && spec.GetClusterIp() != "" {
		ips = []string{spec.GetClusterIp()}
	}
	for _, s := range ips {
		if a, err := netip.ParseAddr(s); err == nil && a.Is4() {
			return a.String()
		}
	}
	return ""
}

func protocol(p string) string {
	if p == "" {
		return "TCP"
	}
	return p
}

// slicePort is the port of sl named name with protocol proto.
func slicePort(sl *discoveryv1.EndpointSlice, name, proto string) (int32, bool) {
	for _, p := range sl.GetPorts() {
		if p.GetName() == name && protocol(p.GetProtocol()) == proto && p.GetPort() > 0 {
			return p.GetPort(), true
		}
	}
	return 0, false
}

// endpoint reads the conditions as Kubernetes defines their absence:
// ready unknown is ready, serving unknown is ready's value, terminating
// unknown is not terminating.
func endpoint(ip string, port int32, c *discoveryv1.EndpointConditions) rules.Endpoint {
	if c == nil {
		c = &discoveryv1.EndpointConditions{}
	}
	ready := c.Ready == nil || *c.Ready
	serving := ready
	if c.Serving != nil {
		serving = *c.Serving
	}
	return rules.Endpoint{IP: ip, Port: port, Ready: ready, Serving: serving,
		Terminating: c.Terminating != nil && *c.Terminating}
}
