package validation

import (
	"fmt"
	"net/netip"

	"podline.dev/pkg/field"
	corev1 "podline.dev/proto/core/v1"
)

// validateEndpoints applies Kubernetes' rules for core/v1 Endpoints: every
// subset has addresses (ready or not), every address is a usable IP (not
// unspecified, loopback or link-local), hostnames are DNS labels and node
// names DNS subdomains, and every port has a number, a protocol, and a name
// when the subset has more than one.
func validateEndpoints(e *corev1.Endpoints) field.ErrorList {
	var errs field.ErrorList
	for i, ss := range e.GetSubsets() {
		p := field.NewPath("subsets").Index(i)
		if len(ss.GetAddresses()) == 0 && len(ss.GetNotReadyAddresses()) == 0 {
			errs = append(errs, field.Required(p, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j, a := range ss.GetAddresses() {
			errs = append(errs, endpointAddress(a, p.Child("addresses").Index(j))...)
		}
		for j, a := range ss.GetNotReadyAddresses() {
			errs = append(errs, endpointAddress(a, p.Child("notReadyAddresses").Index(j))...)
		}
		for j, port := range ss.GetPorts() {
			errs = append(errs, endpointPort(port, len(ss.GetPorts()) > 1, p.Child("ports").Index(j))...)
		}
	}
	return errs
}

func endpointAddress(a *corev1.EndpointAddress, p *field.Path) field.ErrorList {
	errs := endpointIP(a.GetIp(), p.Child("ip"))
	if h := a.GetHostname(); h != "" {
		errs = append(errs, dns1123Label(h, p.Child("hostname"))...)
	}
	if a.NodeName != nil {
		errs = append(errs, dns1123Subdomain(a.GetNodeName(), p.Child("nodeName"))...)
	}
	return errs
}

// endpointIP refuses what cannot be a backend's address: the unspecified
// address, loopback, and link-local unicast or multicast, which mean the
// node itself or services on it.
func endpointIP(v string, p *field.Path) field.ErrorList {
	ip, err := netip.ParseAddr(v)
	if err != nil {
		return ipAddress(v, p)
	}
	var errs field.ErrorList
	switch {
	case ip.IsUnspecified():
		errs = append(errs, field.Invalid(p, v, fmt.Sprintf("may not be unspecified (%s)", v)))
	case ip.IsLoopback():
		errs = append(errs, field.Invalid(p, v, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	case ip.IsLinkLocalUnicast():
		errs = append(errs, field.Invalid(p, v, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	case ip.IsLinkLocalMulticast():
		errs = append(errs, field.Invalid(p, v, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return errs
}

func endpointPort(port *corev1.EndpointPort, requireName bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case port.GetName() != "":
		errs = append(errs, dns1123Label(port.GetName(), p.Child("name"))...)
	case requireName:
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	errs = append(errs, portNumber(port.GetPort(), p.Child("port"))...)
	errs = append(errs, protocol(port.GetProtocol(), p.Child("protocol"))...)
	if port.AppProtocol != nil {
		errs = append(errs, qualifiedName(port.GetAppProtocol(), p.Child("appProtocol"))...)
	}
	return errs
}
