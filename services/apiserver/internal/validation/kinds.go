package validation

import (
	"podline.dev/pkg/field"
	"podline.dev/pkg/object"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// ValidateKind checks the required fields of the kinds that have them.
func ValidateKind(obj object.Object) field.ErrorList {
	switch o := obj.(type) {
	case *corev1.Pod:
		return validatePodSpec(o.GetSpec(), field.NewPath("spec"))
	case *appsv1.Deployment:
		s := o.GetSpec()
		return validateWorkload(s.GetReplicas(), s.GetSelector(), s.GetTemplate(), field.NewPath("spec"))
	case *appsv1.ReplicaSet:
		s := o.GetSpec()
		return validateWorkload(s.GetReplicas(), s.GetSelector(), s.GetTemplate(), field.NewPath("spec"))
	}
	return nil
}

func validatePodSpec(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.GetContainers()) == 0 {
		errs = append(errs, field.Required(p.Child("containers"), ""))
	}
	names := map[string]bool{}
	check := func(cs []*corev1.Container, cp *field.Path) {
		for i, c := range cs {
			ip := cp.Index(i)
			if c.GetName() == "" {
				errs = append(errs, field.Required(ip.Child("name"), ""))
			} else {
				for _, msg := range IsDNS1123Label(c.GetName()) {
					errs = append(errs, field.Invalid(ip.Child("name"), c.GetName(), msg))
				}
				if names[c.GetName()] {
					errs = append(errs, field.Duplicate(ip.Child("name"), c.GetName()))
				}
				names[c.GetName()] = true
			}
			if c.GetImage() == "" {
				errs = append(errs, field.Required(ip.Child("image"), ""))
			}
			for j, port := range c.GetPorts() {
				if cp := port.GetContainerPort(); cp < 1 || cp > 65535 {
					errs = append(errs, field.Invalid(ip.Child("ports").Index(j).Child("containerPort"), cp, "must be between 1 and 65535, inclusive"))
				}
			}
		}
	}
	check(spec.GetInitContainers(), p.Child("initContainers"))
	check(spec.GetContainers(), p.Child("containers"))
	return errs
}

func validateWorkload(replicas int32, sel *metav1.LabelSelector, tmpl *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if replicas < 0 {
		errs = append(errs, field.Invalid(p.Child("replicas"), replicas, "must be greater than or equal to 0"))
	}
	if sel == nil || (len(sel.GetMatchLabels()) == 0 && len(sel.GetMatchExpressions()) == 0) {
		errs = append(errs, field.Required(p.Child("selector"), ""))
	} else {
		errs = append(errs, ValidateLabels(sel.GetMatchLabels(), p.Child("selector", "matchLabels"))...)
	}
	if tmpl == nil {
		return append(errs, field.Required(p.Child("template"), ""))
	}
	tp := p.Child("template")
	errs = append(errs, ValidateLabels(tmpl.GetMetadata().GetLabels(), tp.Child("metadata", "labels"))...)
	if sel != nil && !selectorMatches(sel, tmpl.GetMetadata().GetLabels()) {
		errs = append(errs, field.Invalid(tp.Child("metadata", "labels"), labelString(tmpl.GetMetadata().GetLabels()), "`selector` does not match template `labels`"))
	}
	errs = append(errs, validatePodSpec(tmpl.GetSpec(), tp.Child("spec"))...)
	return errs
}
