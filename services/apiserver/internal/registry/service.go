package registry

import (
	"slices"

	corev1 "podline.dev/proto/core/v1"
)

// normalizeClusterIPs keeps clusterIP and clusterIPs[0] in step, as
// kube-apiserver's Service strategy does: a client may set either one. On
// update (old set) the field the client changed wins.
func normalizeClusterIPs(svc, old *corev1.Service) {
	s := svc.GetSpec()
	if s == nil {
		return
	}
	if old != nil {
		o := old.GetSpec()
		ipChanged := s.ClusterIp != o.GetClusterIp()
		ipsChanged := !slices.Equal(s.ClusterIps, o.GetClusterIps())
		switch {
		case ipChanged && !ipsChanged && s.ClusterIp == "":
			s.ClusterIps = nil // clusterIP cleared (a change of type to ExternalName)
			return
		case ipChanged && !ipsChanged:
			if len(s.ClusterIps) == 0 {
				s.ClusterIps = []string{s.ClusterIp}
			} else {
				s.ClusterIps = append([]string{s.ClusterIp}, s.ClusterIps[1:]...)
			}
			return
		case ipsChanged && !ipChanged:
			s.ClusterIp = ""
			if len(s.ClusterIps) > 0 {
				s.ClusterIp = s.ClusterIps[0]
			}
			return
		}
	}
	switch {
	case s.ClusterIp != "" && len(s.ClusterIps) == 0:
		s.ClusterIps = []string{s.ClusterIp}
	case s.ClusterIp == "" && len(s.ClusterIps) > 0:
		s.ClusterIp = s.ClusterIps[0]
	}
}

// needsClusterIP: every type but ExternalName has a ClusterIP (or None).
func needsClusterIP(s *corev1.ServiceSpec) bool { return s.GetType() != "ExternalName" }

// needsNodePorts: NodePort and LoadBalancer Services have node ports.
func needsNodePorts(s *corev1.ServiceSpec) bool {
	return s.GetType() == "NodePort" || s.GetType() == "LoadBalancer"
}

// patchAllocatedValues copies from old what the server allocated and an
// update left out, as kube-apiserver does, so that `kubectl replace` of a
// manifest without clusterIP or nodePort keeps them instead of failing
// as an attempt to change them.
func patchAllocatedValues(svc, old *corev1.Service) {
	s, o := svc.GetSpec(), old.GetSpec()
	if s == nil || o == nil {
		return
	}
	if needsClusterIP(o) && needsClusterIP(s) {
		if s.ClusterIp == "" {
			s.ClusterIp = o.ClusterIp
		}
		if len(s.ClusterIps) == 0 && len(o.ClusterIps) > 0 {
			s.ClusterIps = slices.Clone(o.ClusterIps)
		}
	}
	if needsNodePorts(o) && needsNodePorts(s) {
		for _, p := range s.Ports {
			if p.GetNodePort() != 0 {
				continue
			}
			for _, op := range o.Ports {
				if op.GetPort() == p.GetPort() && protocolOf(op) == protocolOf(p) && op.GetNodePort() != 0 {
					p.NodePort = op.NodePort
					break
				}
			}
		}
	}
	if s.HealthCheckNodePort == 0 && o.HealthCheckNodePort != 0 && needsHealthCheck(s) && needsHealthCheck(o) {
		s.HealthCheckNodePort = o.HealthCheckNodePort
	}
}

func protocolOf(p *corev1.ServicePort) string {
	if p.GetProtocol() == "" {
		return "TCP"
	}
	return p.GetProtocol()
}

// needsHealthCheck: a LoadBalancer with externalTrafficPolicy Local has a
// health check node port.
func needsHealthCheck(s *corev1.ServiceSpec) bool {
	return s.GetType() == "LoadBalancer" && s.GetExternalTrafficPolicy() == "Local"
}

// dropTypeDependentFields clears, on a change of type, the fields the old
// type had and the new one may not, when the client left them as they were
// (kubectl patch of type alone), as kube-apiserver does: NodePort to
// ClusterIP drops the node ports, which the update then releases.
func dropTypeDependentFields(svc, old *corev1.Service) {
	s, o := svc.GetSpec(), old.GetSpec()
	if s == nil || o == nil {
		return
	}
	if needsClusterIP(o) && !needsClusterIP(s) && s.ClusterIp == o.ClusterIp && slices.Equal(s.ClusterIps, o.ClusterIps) {
		s.ClusterIp, s.ClusterIps = "", nil
		if slices.Equal(s.IpFamilies, o.IpFamilies) {
			s.IpFamilies = nil
		}
		if s.GetIpFamilyPolicy() == o.GetIpFamilyPolicy() {
			s.IpFamilyPolicy = nil
		}
	}
	if needsNodePorts(o) && !needsNodePorts(s) && sameNodePorts(s, o) {
		for _, p := range s.Ports {
			p.NodePort = 0
		}
	}
	if needsHealthCheck(o) && !needsHealthCheck(s) && s.HealthCheckNodePort == o.HealthCheckNodePort {
		s.HealthCheckNodePort = 0
	}
	if s.GetType() != "LoadBalancer" {
		if s.AllocateLoadBalancerNodePorts != nil && o.AllocateLoadBalancerNodePorts != nil && s.GetAllocateLoadBalancerNodePorts() == o.GetAllocateLoadBalancerNodePorts() {
			s.AllocateLoadBalancerNodePorts = nil
		}
		if s.LoadBalancerClass != nil && s.GetLoadBalancerClass() == o.GetLoadBalancerClass() {
			s.LoadBalancerClass = nil
		}
	}
	if !needsNodePorts(s) && needsNodePorts(o) && s.ExternalTrafficPolicy == o.ExternalTrafficPolicy {
		s.ExternalTrafficPolicy = ""
	}
}

// sameNodePorts: the ports' node ports are those of old, port by port.
func sameNodePorts(s, o *corev1.ServiceSpec) bool {
	if len(s.Ports) != len(o.Ports) {
		return false
	}
	for i := range s.Ports {
		if s.Ports[i].GetNodePort() != o.Ports[i].GetNodePort() {
			return false
		}
	}
	return true
}
