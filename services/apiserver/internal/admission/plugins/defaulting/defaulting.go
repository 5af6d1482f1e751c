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
	before := proto.Clone(a.Object)
	Apply(a.Object)
	return !proto.Equal(before, a.Object), nil
}

// Apply sets the defaults of obj's kind in place.
func Apply(obj object.Object) {
	switch o := obj.(type) {
	case *corev1.Pod:
		if o.Spec == nil {
			o.Spec = &corev1.PodSpec{}
		}
		PodSpec(o.Spec)
	case *appsv1.Deployment:
		deployment(o)
	case *appsv1.ReplicaSet:
		if o.Spec == nil {
			o.Spec = &appsv1.ReplicaSetSpec{}
		}
		if o.Spec.Replicas == nil {
			o.Spec.Replicas = proto.Int32(1)
		}
		template(o.Spec.Template)
	case *corev1.Service:
		service(o)
	case *corev1.Secret:
		if o.Type == "" {
			o.Type = "Opaque"
		}
	case *rbacv1.RoleBinding:
		subjects(o.Subjects)
	case *rbacv1.ClusterRoleBinding:
		subjects(o.Subjects)
	case *corev1.Endpoints:
		for _, ss := range o.Subsets {
			for _, p := range ss.Ports {
				if p.Protocol == "" {
					p.Protocol = "TCP"
				}
			}
		}
	case *discoveryv1.EndpointSlice:
		for _, p := range o.Ports {
			if p.Protocol == nil {
				p.Protocol = proto.String("TCP")
			}
		}
	}
}

func template(t *corev1.PodTemplateSpec) {
	if t == nil {
		return
	}
	if t.Spec == nil {
		t.Spec = &corev1.PodSpec{}
	}
	PodSpec(t.Spec)
}

// subjects sets a binding subject's apiGroup as Kubernetes does: the RBAC
// group for users and groups.
func subjects(ss []*rbacv1.Subject) {
	for _, s := range ss {
		if s.ApiGroup == "" && (s.Kind == "User" || s.Kind == "Group") {
			s.ApiGroup = "rbac.authorization.k8s.io"
		}
	}
}
