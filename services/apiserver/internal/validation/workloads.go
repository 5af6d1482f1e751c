package validation

import (
	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/field"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

func validateDeployment(d *appsv1.Deployment) field.ErrorList {
	s := d.GetSpec()
	p := field.NewPath("spec")
	errs := validateWorkload(s.GetReplicas(), s.GetMinReadySeconds(), s.GetSelector(), s.GetTemplate(), p)
	switch st := s.GetStrategy(); st.GetType() {
	case "Recreate":
		if st.GetRollingUpdate() != nil {
			errs = append(errs, field.Forbidden(p.Child("strategy", "rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'"))
		}
	case "RollingUpdate":
		ru := st.GetRollingUpdate()
		rp := p.Child("strategy", "rollingUpdate")
		errs = append(errs, intOrPercent(ru.GetMaxUnavailable(), rp.Child("maxUnavailable"))...)
		errs = append(errs, intOrPercent(ru.GetMaxSurge(), rp.Child("maxSurge"))...)
		if isZero(ru.GetMaxUnavailable()) && isZero(ru.GetMaxSurge()) {
			errs = append(errs, field.Invalid(rp.Child("maxUnavailable"), intOrStringValue(ru.GetMaxUnavailable()), "may not be 0 when `maxSurge` is 0"))
		}
		if mu := ru.GetMaxUnavailable(); mu.GetType() == 1 && percentRe.MatchString(mu.GetStrVal()) && percentOver100(mu.GetStrVal()) {
			errs = append(errs, field.Invalid(rp.Child("maxUnavailable"), mu.GetStrVal(), "must not be greater than 100%"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("strategy", "type"), st.GetType(), []string{"Recreate", "RollingUpdate"}))
	}
	if s.RevisionHistoryLimit != nil {
		errs = append(errs, nonNegative(int64(s.GetRevisionHistoryLimit()), p.Child("revisionHistoryLimit"))...)
	}
	if s.ProgressDeadlineSeconds != nil {
		pd := s.GetProgressDeadlineSeconds()
		errs = append(errs, nonNegative(int64(pd), p.Child("progressDeadlineSeconds"))...)
		if pd <= s.GetMinReadySeconds() {
			errs = append(errs, field.Invalid(p.Child("progressDeadlineSeconds"), pd, "must be greater than minReadySeconds"))
		}
	}
	return errs
}

func validateReplicaSet(rs *appsv1.ReplicaSet) field.ErrorList {
	s := rs.GetSpec()
	return validateWorkload(s.GetReplicas(), s.GetMinReadySeconds(), s.GetSelector(), s.GetTemplate(), field.NewPath("spec"))
}

func validateWorkload(replicas, minReady int32, sel *metav1.LabelSelector, tmpl *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, nonNegative(int64(replicas), p.Child("replicas"))...)
	errs = append(errs, nonNegative(int64(minReady), p.Child("minReadySeconds"))...)
	switch {
	case sel == nil:
		errs = append(errs, field.Required(p.Child("selector"), ""))
	case len(sel.GetMatchLabels()) == 0 && len(sel.GetMatchExpressions()) == 0:
		errs = append(errs, field.Invalid(p.Child("selector"), selectorString(sel), "empty selector is invalid for deployment"))
	default:
		errs = append(errs, labelSelector(sel, p.Child("selector"))...)
	}
	if tmpl == nil {
		return append(errs, field.Required(p.Child("template"), ""))
	}
	tp := p.Child("template")
	errs = append(errs, ValidateLabels(tmpl.GetMetadata().GetLabels(), tp.Child("metadata", "labels"))...)
	errs = append(errs, validateAnnotations(tmpl.GetMetadata().GetAnnotations(), tp.Child("metadata", "annotations"))...)
	if sel != nil && !selectorMatches(sel, tmpl.GetMetadata().GetLabels()) {
		errs = append(errs, field.Invalid(tp.Child("metadata", "labels"), labelString(tmpl.GetMetadata().GetLabels()), "`selector` does not match template `labels`"))
	}
	sp := tp.Child("spec")
	errs = append(errs, ValidatePodSpec(tmpl.GetSpec(), sp)...)
	if rp := tmpl.GetSpec().GetRestartPolicy(); tmpl.GetSpec() != nil && rp != "Always" && rp != "" {
		errs = append(errs, field.NotSupported(sp.Child("restartPolicy"), rp, []string{"Always"}))
	}
	if tmpl.GetSpec().ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(sp.Child("activeDeadlineSeconds"), "activeDeadlineSeconds in ReplicaSet is not Supported"))
	}
	return errs
}

// selectorUpdate keeps an apps/v1 selector immutable.
func selectorUpdate(next, old *metav1.LabelSelector) field.ErrorList {
	if !proto.Equal(next, old) {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "selector"), selectorString(next), msgImmutable)}
	}
	return nil
}

func selectorString(sel *metav1.LabelSelector) string {
	if sel == nil {
		return "null"
	}
	return "v1.LabelSelector{MatchLabels:" + labelString(sel.GetMatchLabels()) + "}"
}

func isZero(v *metav1.IntOrString) bool {
	if v == nil {
		return true
	}
	if v.GetType() == 0 {
		return v.GetIntVal() == 0
	}
	return v.GetStrVal() == "0%"
}

func percentOver100(s string) bool {
	n := 0
	for _, c := range s[:len(s)-1] {
		n = n*10 + int(c-'0')
		if n > 100 {
			return true
		}
	}
	return false
}

func intOrStringValue(v *metav1.IntOrString) any {
	if v.GetType() == 1 {
		return v.GetStrVal()
	}
	return v.GetIntVal()
}
