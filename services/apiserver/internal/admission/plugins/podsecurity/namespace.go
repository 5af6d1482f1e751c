package podsecurity

import (
	"context"
	"fmt"
	"regexp"
	"strings"

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

// warnExistingPods warns, when an update makes a namespace's enforce level
// stricter or different, which of its pods the new level would refuse, as
// Kubernetes does: pods with the same reasons are named together.
func (p *Plugin) warnExistingPods(ctx context.Context, a *admission.Attributes) error {
	next, ok := a.Object.(*corev1.Namespace)
	old, okOld := a.OldObject.(*corev1.Namespace)
	if !ok || !okOld || p.pods == nil {
		return nil
	}
	key := LabelPrefix + ModeEnforce
	nl, ol := next.GetMetadata().GetLabels(), old.GetMetadata().GetLabels()
	level, _ := ParseLevel(nl[key])
	if level == Privileged || (nl[key] == ol[key] && nl[key+"-version"] == ol[key+"-version"]) {
		return nil
	}
	objs, err := p.pods.List(ctx, a.Name)
	if err != nil {
		return err
	}
	var order []string
	byReasons := map[string][]string{}
	for _, o := range objs {
		pod := o.(*corev1.Pod)
		if ph := pod.GetStatus().GetPhase(); ph == "Succeeded" || ph == "Failed" {
			continue
		}
		reasons := Evaluate(level, pod.GetSpec())
		if len(reasons) == 0 {
			continue
		}
		r := strings.Join(reasons, ", ")
		if _, seen := byReasons[r]; !seen {
			order = append(order, r)
		}
		byReasons[r] = append(byReasons[r], pod.GetMetadata().GetName())
	}
	if len(order) == 0 {
		return nil
	}
	a.Warn(fmt.Sprintf("existing pods in namespace %q violate the new PodSecurity enforce level %q", a.Name, level.String()+":"+version(nl[key+"-version"])))
	for _, r := range order {
		names := byReasons[r]
		who := names[0]
		if n := len(names) - 1; n == 1 {
			who += " (and 1 other pod)"
		} else if n > 1 {
			who += fmt.Sprintf(" (and %d other pods)", n)
		}
		a.Warn(who + ": " + r)
	}
	return nil
}
