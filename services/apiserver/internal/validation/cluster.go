package validation

import (
	"slices"

	"podline.dev/pkg/field"
	corev1 "podline.dev/proto/core/v1"
)

func validateNode(n *corev1.Node) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec")
	s := n.GetSpec()
	if c := s.GetPodCidr(); c != "" {
		errs = append(errs, cidr(c, p.Child("podCIDR"))...)
	}
	for i, c := range s.GetPodCidrs() {
		errs = append(errs, cidr(c, p.Child("podCIDRs").Index(i))...)
	}
	seen := map[string]bool{}
	for i, t := range s.GetTaints() {
		tp := p.Child("taints").Index(i)
		errs = append(errs, qualifiedName(t.GetKey(), tp.Child("key"))...)
		for _, msg := range IsValidLabelValue(t.GetValue()) {
			errs = append(errs, field.Invalid(tp.Child("value"), t.GetValue(), msg))
		}
		if t.GetEffect() == "" {
			errs = append(errs, field.Required(tp.Child("effect"), ""))
		} else {
			errs = append(errs, oneOf(t.GetEffect(), validEffects, tp.Child("effect"))...)
		}
		k := t.GetKey() + ":" + t.GetEffect()
		if seen[k] {
			errs = append(errs, field.Duplicate(tp, "taints must be unique by key and effect pair"))
		}
		seen[k] = true
	}
	for _, k := range sortedKeys(n.GetStatus().GetCapacity()) {
		_, qerrs := quantity(n.GetStatus().GetCapacity()[k], field.NewPath("status", "capacity").Key(k))
		errs = append(errs, qerrs...)
	}
	for _, k := range sortedKeys(n.GetStatus().GetAllocatable()) {
		_, qerrs := quantity(n.GetStatus().GetAllocatable()[k], field.NewPath("status", "allocatable").Key(k))
		errs = append(errs, qerrs...)
	}
	return errs
}

func validateNamespace(ns *corev1.Namespace) field.ErrorList {
	var errs field.ErrorList
	for i, f := range ns.GetSpec().GetFinalizers() {
		fp := field.NewPath("spec", "finalizers").Index(i)
		if f == "kubernetes" {
			continue
		}
		errs = append(errs, qualifiedName(f, fp)...)
	}
	return errs
}

// nodeUpdate lets podCIDR(s) and providerID be set once, as Kubernetes does.
func nodeUpdate(next, old *corev1.Node) field.ErrorList {
	var errs field.ErrorList
	n, o := next.GetSpec(), old.GetSpec()
	if o.GetPodCidr() != "" && n.GetPodCidr() != o.GetPodCidr() ||
		len(o.GetPodCidrs()) > 0 && !slices.Equal(n.GetPodCidrs(), o.GetPodCidrs()) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "podCIDRs"), `node updates may not change podCIDR except from "" to valid`))
	}
	if o.GetProviderId() != "" && n.GetProviderId() != o.GetProviderId() {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "providerID"), `node updates may not change providerID except from "" to valid`))
	}
	return errs
}
