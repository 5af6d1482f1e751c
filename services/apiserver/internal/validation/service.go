package validation

import (
	"fmt"

	"podline.dev/pkg/field"
	corev1 "podline.dev/proto/core/v1"
)

var (
	serviceTypes      = []string{"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"}
	sessionAffinities = []string{"ClientIP", "None"}
	trafficPolicies   = []string{"Cluster", "Local"}
	ipFamilyPolicies  = []string{"PreferDualStack", "RequireDualStack", "SingleStack"}
	ipFamilies        = []string{"IPv4", "IPv6"}
)

// maxClientIPTimeout is Kubernetes' bound on ClientIP affinity: one day.
const maxClientIPTimeout = 86400

func validateService(svc *corev1.Service) field.ErrorList {
	s := svc.GetSpec()
	p := field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, oneOf(s.GetType(), serviceTypes, p.Child("type"))...)
	errs = append(errs, oneOf(s.GetSessionAffinity(), sessionAffinities, p.Child("sessionAffinity"))...)
	headless := s.GetClusterIp() == "None"
	switch {
	case s.GetType() == "ExternalName":
		if s.GetExternalName() == "" {
			errs = append(errs, field.Required(p.Child("externalName"), ""))
		} else {
			errs = append(errs, dns1123Subdomain(s.GetExternalName(), p.Child("externalName"))...)
		}
	case len(s.GetPorts()) == 0 && !headless:
		errs = append(errs, field.Required(p.Child("ports"), ""))
	}
	if ip := s.GetClusterIp(); ip != "" && !headless {
		errs = append(errs, ipAddress(ip, p.Child("clusterIP"))...)
	}
	errs = append(errs, validateClusterIPs(s, p)...)
	errs = append(errs, validateSessionAffinity(s, p)...)
	ports := map[string]bool{}
	nodePorts := map[string]bool{}
	names := map[string]bool{}
	for i, port := range s.GetPorts() {
		pp := p.Child("ports").Index(i)
		switch n := port.GetName(); {
		case n == "" && len(s.GetPorts()) > 1:
			errs = append(errs, field.Required(pp.Child("name"), ""))
		case n != "":
			errs = append(errs, dns1123Label(n, pp.Child("name"))...)
			if names[n] {
				errs = append(errs, field.Duplicate(pp.Child("name"), n))
			}
			names[n] = true
		}
		errs = append(errs, portNumber(port.GetPort(), pp.Child("port"))...)
		errs = append(errs, protocol(port.GetProtocol(), pp.Child("protocol"))...)
		key := fmt.Sprintf("%s/%d", port.GetProtocol(), port.GetPort())
		if ports[key] {
			errs = append(errs, field.Duplicate(pp, fmt.Sprintf("{%q, %d}", port.GetProtocol(), port.GetPort())))
		}
		ports[key] = true
		if np := port.GetNodePort(); np != 0 {
			npKey := fmt.Sprintf("%s/%d", port.GetProtocol(), np)
			if nodePorts[npKey] {
				errs = append(errs, field.Duplicate(pp.Child("nodePort"), np))
			}
			nodePorts[npKey] = true
		}
		if tp := port.GetTargetPort(); tp != nil {
			errs = append(errs, probePort(tp, pp.Child("targetPort"))...)
		}
		if np := port.GetNodePort(); np != 0 {
			if s.GetType() != "NodePort" && s.GetType() != "LoadBalancer" {
				errs = append(errs, field.Forbidden(pp.Child("nodePort"), "may not be used when `type` is '"+s.GetType()+"'"))
			} else {
				errs = append(errs, portNumber(np, pp.Child("nodePort"))...)
			}
		}
	}
	errs = append(errs, ValidateLabels(s.GetSelector(), p.Child("selector"))...)
	if v := s.GetExternalTrafficPolicy(); v != "" {
		if s.GetType() != "NodePort" && s.GetType() != "LoadBalancer" {
			errs = append(errs, field.Invalid(p.Child("externalTrafficPolicy"), v, "may only be set when `type` is 'NodePort' or 'LoadBalancer'"))
		} else {
			errs = append(errs, oneOf(v, trafficPolicies, p.Child("externalTrafficPolicy"))...)
		}
	}
	if s.InternalTrafficPolicy != nil {
		errs = append(errs, oneOf(s.GetInternalTrafficPolicy(), trafficPolicies, p.Child("internalTrafficPolicy"))...)
	}
	for i, ip := range s.GetExternalIps() {
		errs = append(errs, ipAddress(ip, p.Child("externalIPs").Index(i))...)
	}
	return errs
}

// validateClusterIPs checks clusterIP against clusterIPs, the IP family
// fields, and the types that cannot be headless or have a ClusterIP.
func validateClusterIPs(s *corev1.ServiceSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	ips := s.GetClusterIps()
	if s.GetType() == "ExternalName" {
		if s.GetClusterIp() != "" || len(ips) > 0 {
			errs = append(errs, field.Forbidden(p.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		if s.IpFamilyPolicy != nil {
			errs = append(errs, field.Forbidden(p.Child("ipFamilyPolicy"), "may not be set for ExternalName services"))
		}
		if len(s.GetIpFamilies()) > 0 {
			errs = append(errs, field.Forbidden(p.Child("ipFamilies"), "may not be set for ExternalName services"))
		}
		return errs
	}
	switch {
	case s.GetClusterIp() != "" && len(ips) == 0:
		errs = append(errs, field.Required(p.Child("clusterIPs"), ""))
	case s.GetClusterIp() != "" && ips[0] != s.GetClusterIp():
		errs = append(errs, field.Invalid(p.Child("clusterIPs"), ips, "first value must match `clusterIP`"))
	case s.GetClusterIp() == "" && len(ips) > 0:
		errs = append(errs, field.Invalid(p.Child("clusterIPs"), ips, "must be empty when `clusterIP` is not specified"))
	}
	if len(ips) > 2 {
		errs = append(errs, field.Invalid(p.Child("clusterIPs"), ips, "may only hold up to 2 values"))
	}
	for i, ip := range ips {
		if i == 0 || ip == "None" {
			if ip == "None" && i > 0 {
				errs = append(errs, field.Invalid(p.Child("clusterIPs").Index(i), ip, "may only be set to 'None' as the first value"))
			}
			continue
		}
		errs = append(errs, ipAddress(ip, p.Child("clusterIPs").Index(i))...)
	}
	if len(ips) > 0 && ips[0] == "None" {
		switch s.GetType() {
		case "NodePort", "LoadBalancer":
			errs = append(errs, field.Invalid(p.Child("clusterIPs").Index(0), "None", "may not be set to 'None' for "+s.GetType()+" services"))
		}
	}
	if s.IpFamilyPolicy != nil {
		errs = append(errs, oneOf(s.GetIpFamilyPolicy(), ipFamilyPolicies, p.Child("ipFamilyPolicy"))...)
	}
	seen := map[string]bool{}
	for i, f := range s.GetIpFamilies() {
		fp := p.Child("ipFamilies").Index(i)
		errs = append(errs, oneOf(f, ipFamilies, fp)...)
		if seen[f] {
			errs = append(errs, field.Duplicate(fp, f))
		}
		seen[f] = true
	}
	return errs
}

// validateSessionAffinity bounds ClientIP's timeout and refuses a config
// for None.
func validateSessionAffinity(s *corev1.ServiceSpec, p *field.Path) field.ErrorList {
	cfg := s.GetSessionAffinityConfig()
	switch s.GetSessionAffinity() {
	case "ClientIP":
		tp := p.Child("sessionAffinityConfig", "clientIP", "timeoutSeconds")
		if cfg.GetClientIp() == nil || cfg.GetClientIp().TimeoutSeconds == nil {
			return field.ErrorList{field.Required(tp, "")}
		}
		if t := cfg.GetClientIp().GetTimeoutSeconds(); t <= 0 || t > maxClientIPTimeout {
			return field.ErrorList{field.Invalid(tp, t, fmt.Sprintf("must be greater than 0 and less than %d", maxClientIPTimeout))}
		}
	case "None":
		if cfg != nil {
			return field.ErrorList{field.Invalid(p.Child("sessionAffinityConfig"), cfg.String(),
				"must not be set when session affinity is None")}
		}
	}
	return nil
}

// serviceUpdate keeps clusterIP once set, as Kubernetes does.
func serviceUpdate(next, old *corev1.Service) field.ErrorList {
	o, n := old.GetSpec().GetClusterIp(), next.GetSpec().GetClusterIp()
	if o != "" && n != o && next.GetSpec().GetType() != "ExternalName" {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "clusterIP"), n, msgImmutable)}
	}
	return nil
}
