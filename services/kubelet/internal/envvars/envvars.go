package envvars

import (
	"sort"
	"strconv"
	"strings"

	corev1 "podline.dev/proto/core/v1"
)

// Var is one environment variable.
type Var struct {
	Name  string
	Value string
}

// ForPod picks the Services a pod in namespace ns sees and returns their
// variables. services may hold Services of any namespace; a Service of ns
// shadows the default namespace's of the same name.
func ForPod(ns string, enableServiceLinks bool, services []*corev1.Service) []Var {
	seen := map[string]*corev1.Service{}
	for _, s := range services {
		if !hasClusterIP(s) {
			continue
		}
		name, sns := s.GetMetadata().GetName(), s.GetMetadata().GetNamespace()
		switch {
		case sns == ns && enableServiceLinks:
			seen[name] = s
		case sns == "default" && name == "kubernetes":
			if _, ok := seen[name]; !ok {
				seen[name] = s
			}
		}
	}
	picked := make([]*corev1.Service, 0, len(seen))
	for _, s := range seen {
		picked = append(picked, s)
	}
	sort.Slice(picked, func(i, j int) bool {
		return picked[i].GetMetadata().GetName() < picked[j].GetMetadata().GetName()
	})
	return FromServices(picked)
}

// FromServices returns the variables of services, in their order. Services
// without a cluster IP (headless, ExternalName, not yet allocated) have
// none.
func FromServices(services []*corev1.Service) []Var {
	var out []Var
	for _, s := range services {
		if !hasClusterIP(s) {
			continue
		}
		ip := s.GetSpec().GetClusterIp()
		prefix := envName(s.GetMetadata().GetName())
		ports := s.GetSpec().GetPorts()
		out = append(out, Var{prefix + "_SERVICE_HOST", ip})
		if len(ports) == 0 {
			continue
		}
		out = append(out, Var{prefix + "_SERVICE_PORT", strconv.Itoa(int(ports[0].GetPort()))})
		for _, p := range ports {
			if p.GetName() != "" {
				out = append(out, Var{prefix + "_SERVICE_PORT_" + envName(p.GetName()), strconv.Itoa(int(p.GetPort()))})
			}
		}
		out = append(out, linkVars(prefix, ip, ports)...)
	}
	return out
}

func linkVars(prefix, ip string, ports []*corev1.ServicePort) []Var {
	url := func(p *corev1.ServicePort) string {
		return strings.ToLower(protocol(p)) + "://" + ip + ":" + strconv.Itoa(int(p.GetPort()))
	}
	out := []Var{{prefix + "_PORT", url(ports[0])}}
	for _, p := range ports {
		base := prefix + "_PORT_" + strconv.Itoa(int(p.GetPort())) + "_" + strings.ToUpper(protocol(p))
		out = append(out,
			Var{base, url(p)},
			Var{base + "_PROTO", strings.ToLower(protocol(p))},
			Var{base + "_PORT", strconv.Itoa(int(p.GetPort()))},
			Var{base + "_ADDR", ip},
		)
	}
	return out
}

func protocol(p *corev1.ServicePort) string {
	if p.GetProtocol() == "" {
		return "TCP"
	}
	return p.GetProtocol()
}

func hasClusterIP(s *corev1.Service) bool {
	ip := s.GetSpec().GetClusterIp()
	return ip != "" && ip != "None"
}

// envName is a Service or port name as a variable name: upper case, with
// dashes as underscores.
func envName(name string) string {
	return strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}
