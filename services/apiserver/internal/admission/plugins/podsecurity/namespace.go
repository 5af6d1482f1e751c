package podsecurity

import (
	"regexp"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/field"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/internal/admission"
)

var versionRe = regexp.MustCompile(`^v1\.(0|[1-9][0-9]*)$`)

// validateNamespace refuses a namespace whose pod-security labels name no
// level or version, with 422 as Kubernetes does.
func validateNamespace(a *admission.Attributes) error {
	ns, ok := a.Object.(*corev1.Namespace)
	if !ok || a.Subresource != "" {
		return nil
	}
	labels := ns.GetMetadata().GetLabels()
	p := field.NewPath("metadata", "labels")
	var errs field.ErrorList
	for _, mode := range []string{ModeEnforce, ModeWarn, ModeAudit} {
		if v, set := labels[LabelPrefix+mode]; set {
			if _, ok := ParseLevel(v); !ok {
				errs = append(errs, field.Invalid(p.Key(LabelPrefix+mode), v, "must be one of privileged, baseline, restricted"))
			}
		}
		if v, set := labels[LabelPrefix+mode+"-version"]; set && v != "latest" && !versionRe.MatchString(v) {
			errs = append(errs, field.Invalid(p.Key(LabelPrefix+mode+"-version"), v, "must be 'latest' or 'v1.x'"))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(apierrors.GroupKind{Kind: "Namespace"}, a.Name, errs)
}
