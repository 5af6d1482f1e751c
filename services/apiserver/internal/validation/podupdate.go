package validation

import (
	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/field"
	corev1 "podline.dev/proto/core/v1"
)

// podUpdateForbidden is Kubernetes' message for a pod spec change it refuses.
const podUpdateForbidden = "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"

// ValidatePodUpdate checks what an update may change in a pod's spec: the
// containers' images, activeDeadlineSeconds (set or shortened), tolerations
// (additions, and shorter tolerationSeconds), and the removal of
// scheduling gates. Everything else is immutable, as in Kubernetes.
func ValidatePodUpdate(next, old *corev1.Pod) field.ErrorList {
	p := field.NewPath("spec")
	ns, os := next.GetSpec(), old.GetSpec()
	if ns == nil || os == nil {
		return nil
	}
	var errs field.ErrorList
	if old.GetSpec().ActiveDeadlineSeconds != nil {
		if ns.ActiveDeadlineSeconds == nil {
			errs = append(errs, field.Invalid(p.Child("activeDeadlineSeconds"), nil, "must not update from a positive integer to nil value"))
		} else if ns.GetActiveDeadlineSeconds() > os.GetActiveDeadlineSeconds() {
			errs = append(errs, field.Invalid(p.Child("activeDeadlineSeconds"), ns.GetActiveDeadlineSeconds(), "must be less than or equal to previous value"))
		}
	}
	errs = append(errs, tolerationsUpdate(ns.GetTolerations(), os.GetTolerations(), p.Child("tolerations"))...)
	for _, g := range ns.GetSchedulingGates() {
		if !hasGate(os.GetSchedulingGates(), g.GetName()) {
			errs = append(errs, field.Forbidden(p.Child("schedulingGates"), "only deletion is allowed, but found new scheduling gate '"+g.GetName()+"'"))
		}
	}
	munged := proto.Clone(ns).(*corev1.PodSpec)
	copyImages(munged.Containers, os.GetContainers())
	copyImages(munged.InitContainers, os.GetInitContainers())
	munged.ActiveDeadlineSeconds = os.ActiveDeadlineSeconds
	munged.Tolerations = os.GetTolerations()
	munged.SchedulingGates = os.GetSchedulingGates()
	if os.GetTerminationGracePeriodSeconds() < 0 && ns.GetTerminationGracePeriodSeconds() == 1 {
		munged.TerminationGracePeriodSeconds = os.TerminationGracePeriodSeconds
	}
	if !proto.Equal(munged, os) {
		errs = append(errs, field.Forbidden(p, podUpdateForbidden))
	}
	return errs
}

func copyImages(into, from []*corev1.Container) {
	if len(into) != len(from) {
		return
	}
	for i := range into {
		into[i].Image = from[i].GetImage()
	}
}

func hasGate(gates []*corev1.PodSchedulingGate, name string) bool {
	for _, g := range gates {
		if g.GetName() == name {
			return true
		}
	}
	return false
}

// tolerationsUpdate requires every old toleration to stay, with a
// tolerationSeconds no longer than before.
func tolerationsUpdate(next, old []*corev1.Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, o := range old {
		found := false
		for _, n := range next {
			if n.GetKey() == o.GetKey() && n.GetOperator() == o.GetOperator() && n.GetValue() == o.GetValue() && n.GetEffect() == o.GetEffect() &&
				(o.TolerationSeconds == nil) == (n.TolerationSeconds == nil) && n.GetTolerationSeconds() <= o.GetTolerationSeconds() {
				found = true
				break
			}
		}
		if !found {
			errs = append(errs, field.Forbidden(p, "existing toleration can not be modified except its tolerationSeconds"))
			break
		}
	}
	return errs
}
