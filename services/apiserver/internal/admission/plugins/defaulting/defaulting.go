// Package defaulting is the mutating plugin that owns Kubernetes' field
// defaults for the kinds podline serves (Kubernetes applies them when it
// decodes a request; podline applies them here, first in the chain, so
// every later plugin and validation sees the defaulted object). Pod
// defaults apply to pods and to the pod templates of Deployments and
// ReplicaSets, as in Kubernetes.
package defaulting

import (
	"context"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/object"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
	rbacv1 "podline.dev/proto/rbac/v1"
	"podline.dev/services/apiserver/internal/admission"
)

// Name is the plugin's name in spans.
const Name = "Defaulting"

// Plugin sets defaults on creates and updates.
type Plugin struct{}

var _ admission.Mutator = Plugin{}

// New returns the plugin.
func New() Plugin { return Plugin{} }

// Name implements admission.Mutator.
func (Plugin) Name() string { return Name }

// Admit implements admission.Mutator.
func (Plugin) Admit(_ context.Context, a *admission.Attributes) (bool, error) {
	if a.Object == nil || a.Subresource != "" {
		return false, nil
	}
	return Apply(a.Object), nil
}

// Apply sets the defaults of obj's kind in place and reports whether it
// set any (whether obj is no longer proto.Equal to what it was).
func Apply(obj object.Object) bool {
	d := &defaulter{}
	switch o := obj.(type) {
	case *corev1.Pod:
		if o.Spec == nil {
			o.Spec = mark(d, &corev1.PodSpec{})
		}
		d.podSpec(o.Spec)
	case *appsv1.Deployment:
		d.deployment(o)
	case *appsv1.ReplicaSet:
		if o.Spec == nil {
			o.Spec = mark(d, &appsv1.ReplicaSetSpec{})
		}
		if o.Spec.Replicas == nil {
			o.Spec.Replicas = mark(d, proto.Int32(1))
		}
		d.template(o.Spec.Template)
	case *corev1.Service:
		d.service(o)
	case *corev1.Secret:
		d.str(&o.Type, "Opaque")
	case *rbacv1.RoleBinding:
		d.subjects(o.Subjects)
	case *rbacv1.ClusterRoleBinding:
		d.subjects(o.Subjects)
	case *corev1.Endpoints:
		for _, ss := range o.Subsets {
			for _, p := range ss.Ports {
				d.str(&p.Protocol, "TCP")
			}
		}
	case *discoveryv1.EndpointSlice:
		for _, p := range o.Ports {
			if p.Protocol == nil {
				p.Protocol = mark(d, proto.String("TCP"))
			}
		}
	}
	return d.changed
}

// defaulter sets defaults and remembers whether it set any.
type defaulter struct{ changed bool }

// mark returns v, noting that a default was set.
func mark[T any](d *defaulter, v T) T {
	d.changed = true
	return v
}

// str sets an empty string field to v.
func (d *defaulter) str(f *string, v string) {
	if *f == "" && v != "" {
		*f = v
		d.changed = true
	}
}

func (d *defaulter) template(t *corev1.PodTemplateSpec) {
	if t == nil {
		return
	}
	if t.Spec == nil {
		t.Spec = mark(d, &corev1.PodSpec{})
	}
	d.podSpec(t.Spec)
}

// subjects sets a binding subject's apiGroup as Kubernetes does: the RBAC
// group for users and groups.
func (d *defaulter) subjects(ss []*rbacv1.Subject) {
	for _, s := range ss {
		if s.Kind == "User" || s.Kind == "Group" {
			d.str(&s.ApiGroup, "rbac.authorization.k8s.io")
		}
	}
}
