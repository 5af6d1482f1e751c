package validation

import (
	"podline.dev/pkg/field"
	corev1 "podline.dev/proto/core/v1"
)

var (
	serviceTypes      = []string{"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"}
	sessionAffinities = []string{"ClientIP", "None"}
	trafficPolicies   = []string{"Cluster", "Local"}
)

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

// serviceUpdate keeps clusterIP once set, as Kubernetes does.
func serviceUpdate(next, old *corev1.Service) field.ErrorList {
	o, n := old.GetSpec().GetClusterIp(), next.GetSpec().GetClusterIp()
	if o != "" && n != o && next.GetSpec().GetType() != "ExternalName" {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "clusterIP"), n, msgImmutable)}
	}
	return nil
}
