package validation

import (
	"slices"

	"podline.dev/pkg/field"
	coordinationv1 "podline.dev/proto/coordination/v1"
	corev1 "podline.dev/proto/core/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
)

var (
	addressTypes = []string{"FQDN", "IPv4", "IPv6"}
)

// Kubernetes' limits on EndpointSlices.
const (
	maxEndpoints     = 1000
	maxEndpointAddrs = 100
	maxEndpointPorts = 20000
)

// validateEvent applies Kubernetes' rules for core/v1 events, which are
// lenient for compatibility: no field is required, the reporting component
// must be a qualified name, and the event's namespace must be the involved
// object's (or default, for a cluster-scoped object).
func validateEvent(e *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	ns := e.GetMetadata().GetNamespace()
	ions := e.GetInvolvedObject().GetNamespace()
	switch {
	case ions == "" && ns != "" && ns != "default":
		errs = append(errs, field.Invalid(field.NewPath("involvedObject", "namespace"), ions, "does not match event.namespace"))
	case ions != "" && ions != ns:
		errs = append(errs, field.Invalid(field.NewPath("involvedObject", "namespace"), ions, "does not match event.namespace"))
	}
	if rc := e.GetReportingComponent(); rc != "" {
		errs = append(errs, qualifiedName(rc, field.NewPath("reportingComponent"))...)
	}
	return errs
}

func validateLease(l *coordinationv1.Lease) field.ErrorList {
	var errs field.ErrorList
	s := l.GetSpec()
	p := field.NewPath("spec")
	if s.LeaseDurationSeconds != nil && s.GetLeaseDurationSeconds() <= 0 {
		errs = append(errs, field.Invalid(p.Child("leaseDurationSeconds"), s.GetLeaseDurationSeconds(), "must be greater than 0"))
	}
	if s.LeaseTransitions != nil {
		errs = append(errs, nonNegative(int64(s.GetLeaseTransitions()), p.Child("leaseTransitions"))...)
	}
	return errs
}

func validateEndpointSlice(es *discoveryv1.EndpointSlice) field.ErrorList {
	var errs field.ErrorList
	at := es.GetAddressType()
	if at == "" {
		errs = append(errs, field.Required(field.NewPath("addressType"), ""))
	} else if !slices.Contains(addressTypes, at) {
		errs = append(errs, field.NotSupported(field.NewPath("addressType"), at, addressTypes))
	}
	if n := len(es.GetEndpoints()); n > maxEndpoints {
		errs = append(errs, field.TooLong(field.NewPath("endpoints"), n, maxEndpoints))
	}
	for i, ep := range es.GetEndpoints() {
		ap := field.NewPath("endpoints").Index(i).Child("addresses")
		switch n := len(ep.GetAddresses()); {
		case n == 0:
			errs = append(errs, field.Required(ap, "must contain at least 1 address"))
		case n > maxEndpointAddrs:
			errs = append(errs, field.TooLong(ap, n, maxEndpointAddrs))
		}
		for j, a := range ep.GetAddresses() {
			switch at {
			case "IPv4", "IPv6":
				errs = append(errs, ipAddress(a, ap.Index(j))...)
			case "FQDN":
				errs = append(errs, dns1123Subdomain(a, ap.Index(j))...)
			}
		}
		if h := ep.GetHostname(); ep.Hostname != nil {
			errs = append(errs, dns1123Label(h, field.NewPath("endpoints").Index(i).Child("hostname"))...)
		}
	}
	if n := len(es.GetPorts()); n > maxEndpointPorts {
		errs = append(errs, field.TooLong(field.NewPath("ports"), n, maxEndpointPorts))
	}
	names := map[string]bool{}
	for i, port := range es.GetPorts() {
		pp := field.NewPath("ports").Index(i)
		if port.Name != nil && port.GetName() != "" {
			errs = append(errs, dns1123Label(port.GetName(), pp.Child("name"))...)
		}
		if names[port.GetName()] {
			errs = append(errs, field.Duplicate(pp.Child("name"), port.GetName()))
		}
		names[port.GetName()] = true
		if port.Protocol != nil {
			errs = append(errs, protocol(port.GetProtocol(), pp.Child("protocol"))...)
		}
		if port.Port != nil {
			errs = append(errs, portNumber(port.GetPort(), pp.Child("port"))...)
		}
	}
	return errs
}

// endpointSliceUpdate keeps addressType.
func endpointSliceUpdate(next, old *discoveryv1.EndpointSlice) field.ErrorList {
	if next.GetAddressType() != old.GetAddressType() {
		return field.ErrorList{field.Invalid(field.NewPath("addressType"), next.GetAddressType(), msgImmutable)}
	}
	return nil
}
