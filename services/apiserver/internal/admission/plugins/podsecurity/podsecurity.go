// Package podsecurity is Kubernetes' Pod Security admission: a namespace's
// labels pod-security.kubernetes.io/{enforce,warn,audit} name a level
// (privileged, baseline, restricted). A pod that violates the enforce
// level is refused with 403 and the reasons; one that violates the warn
// level is admitted with a Warning; the audit level's violations are
// recorded on the admission span (podline has no audit log of its own
// yet). Pod templates (Deployments, ReplicaSets) are warned about, never
// refused, as in Kubernetes.
package podsecurity

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/internal/admission"
)

// Name is the plugin's name in spans.
const Name = "PodSecurity"

// Namespace labels, as Kubernetes names them.
const (
	LabelPrefix = "pod-security.kubernetes.io/"
	ModeEnforce = "enforce"
	ModeWarn    = "warn"
	ModeAudit   = "audit"
)

// AttrAudit is the span attribute that carries audit-mode violations.
const AttrAudit = "podsecurity.audit"

// Plugin validates pods and pod templates against their namespace's levels.
type Plugin struct {
	namespaces admission.Getter
	pods       admission.Lister
}

var _ admission.Validator = (*Plugin)(nil)

// New returns the plugin reading namespaces from namespaces and, to warn
// about existing pods when a namespace's enforce level changes, pods (nil:
// no such warnings).
func New(namespaces admission.Getter, pods admission.Lister) *Plugin {
	return &Plugin{namespaces: namespaces, pods: pods}
}

// Name implements admission.Validator.
func (*Plugin) Name() string { return Name }

// Validate implements admission.Validator.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Resource.Kind == "Namespace" && a.Resource.Group.Name == "" {
		if err := validateNamespace(a); err != nil || a.Operation != admission.Update {
			return err
		}
		return p.warnExistingPods(ctx, a)
	}
	spec, template := podSpecOf(a)
	if spec == nil || a.Namespace == "" {
		return nil
	}
	obj, err := p.namespaces.Get(ctx, "", a.Namespace)
	if err != nil {
		// NamespaceLifecycle answers for a missing namespace.
		return nil
	}
	labels := obj.GetMetadata().GetLabels()
	for _, mode := range []string{ModeEnforce, ModeWarn, ModeAudit} {
		level, ok := ParseLevel(labels[LabelPrefix+mode])
		if !ok || level == Privileged {
			continue
		}
		reasons := Evaluate(level, spec)
		if len(reasons) == 0 {
			continue
		}
		policy := fmt.Sprintf("%q", level.String()+":"+version(labels[LabelPrefix+mode+"-version"]))
		detail := fmt.Sprintf("PodSecurity %s: %s", policy, strings.Join(reasons, ", "))
		switch {
		case mode == ModeEnforce && template:
			// Enforce applies to pods only.
		case mode == ModeEnforce:
			return a.Forbidden("violates " + detail)
		case mode == ModeAudit:
			trace.SpanFromContext(ctx).SetAttributes(attribute.String(AttrAudit, "would violate "+detail))
		default:
			a.Warn("would violate " + detail)
		}
	}
	return nil
}

func version(v string) string {
	if v == "" {
		return "latest"
	}
	return v
}

// podSpecOf returns the pod spec a write carries and whether it is a
// template. Pods are checked when created or when their spec changes;
// status writes and deletes are not checked.
func podSpecOf(a *admission.Attributes) (*corev1.PodSpec, bool) {
	if a.Object == nil || a.Subresource != "" || a.Operation == admission.Delete {
		return nil, false
	}
	switch o := a.Object.(type) {
	case *corev1.Pod:
		if old, ok := a.OldObject.(*corev1.Pod); ok && sameImages(o.GetSpec(), old.GetSpec()) {
			return nil, false
		}
		return o.GetSpec(), false
	case *appsv1.Deployment:
		return o.GetSpec().GetTemplate().GetSpec(), true
	case *appsv1.ReplicaSet:
		return o.GetSpec().GetTemplate().GetSpec(), true
	}
	return nil, false
}

// sameImages reports whether an update leaves the pod's images alone (the
// only spec change an update may make that Pod Security re-checks).
func sameImages(a, b *corev1.PodSpec) bool {
	ca := append(append([]*corev1.Container(nil), a.GetInitContainers()...), a.GetContainers()...)
	cb := append(append([]*corev1.Container(nil), b.GetInitContainers()...), b.GetContainers()...)
	if len(ca) != len(cb) {
		return false
	}
	for i := range ca {
		if ca[i].GetImage() != cb[i].GetImage() {
			return false
		}
	}
	return true
}
