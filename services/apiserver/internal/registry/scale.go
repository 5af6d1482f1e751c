package registry

import (
	"context"
	"fmt"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/field"
	"podline.dev/pkg/k8sjson"
	"podline.dev/pkg/labels"
	"podline.dev/pkg/object"
	appsv1 "podline.dev/proto/apps/v1"
	autoscalingv1 "podline.dev/proto/autoscaling/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/patch"
)

// scalable is what the scale subresource reads and writes of a kind.
type scalable struct {
	replicas    func(obj object.Object) int32
	setReplicas func(obj object.Object, n int32)
	observed    func(obj object.Object) int32
	selector    func(obj object.Object) *metav1.LabelSelector
}

var scalables = map[string]scalable{
	"Deployment": {
		replicas: func(o object.Object) int32 { return replicasOr1(o.(*appsv1.Deployment).GetSpec().Replicas) },
		setReplicas: func(o object.Object, n int32) {
			d := o.(*appsv1.Deployment)
			if d.Spec == nil {
				d.Spec = &appsv1.DeploymentSpec{}
			}
			d.Spec.Replicas = &n
		},
		observed: func(o object.Object) int32 { return o.(*appsv1.Deployment).GetStatus().GetReplicas() },
		selector: func(o object.Object) *metav1.LabelSelector { return o.(*appsv1.Deployment).GetSpec().GetSelector() },
	},
	"ReplicaSet": {
		replicas: func(o object.Object) int32 { return replicasOr1(o.(*appsv1.ReplicaSet).GetSpec().Replicas) },
		setReplicas: func(o object.Object, n int32) {
			rs := o.(*appsv1.ReplicaSet)
			if rs.Spec == nil {
				rs.Spec = &appsv1.ReplicaSetSpec{}
			}
			rs.Spec.Replicas = &n
		},
		observed: func(o object.Object) int32 { return o.(*appsv1.ReplicaSet).GetStatus().GetReplicas() },
		selector: func(o object.Object) *metav1.LabelSelector { return o.(*appsv1.ReplicaSet).GetSpec().GetSelector() },
	},
}

// replicasOr1 is Kubernetes' default of spec.replicas.
func replicasOr1(n *int32) int32 {
	if n == nil {
		return 1
	}
	return *n
}

func (r *Registry) scalable(name string) (scalable, error) {
	s, ok := scalables[r.Resource.Kind]
	if !ok || !r.Resource.Scale {
		return scalable{}, apierrors.NewNotFound(r.gr(), name)
	}
	return s, nil
}

// scaleOf is the autoscaling/v1 Scale of an object.
func (r *Registry) scaleOf(s scalable, obj object.Object) *autoscalingv1.Scale {
	md := obj.GetMetadata()
	sel := ""
	if ls := s.selector(obj); ls != nil {
		if parsed, err := labels.FromLabelSelector(ls); err == nil {
			sel = parsed.String()
		}
	}
	return &autoscalingv1.Scale{
		ApiVersion: "autoscaling/v1",
		Kind:       "Scale",
		Metadata: &metav1.ObjectMeta{Name: md.GetName(), Namespace: md.GetNamespace(), Uid: md.GetUid(),
			ResourceVersion: md.GetResourceVersion(), CreationTimestamp: md.GetCreationTimestamp()},
		Spec:   &autoscalingv1.ScaleSpec{Replicas: s.replicas(obj)},
		Status: &autoscalingv1.ScaleStatus{Replicas: s.observed(obj), Selector: sel},
	}
}

// GetScale reads the scale subresource.
func (r *Registry) GetScale(ctx context.Context, namespace, name string) (*autoscalingv1.Scale, error) {
	s, err := r.scalable(name)
	if err != nil {
		return nil, err
	}
	obj, err := r.Get(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return r.scaleOf(s, obj), nil
}

// UpdateScale sets spec.replicas from a Scale; its resourceVersion, when
// set, is a precondition on the object.
func (r *Registry) UpdateScale(ctx context.Context, namespace, name string, scale *autoscalingv1.Scale, dryRun bool) (*autoscalingv1.Scale, error) {
	return r.writeScale(ctx, namespace, name, dryRun, func(*autoscalingv1.Scale) (*autoscalingv1.Scale, error) { return scale, nil })
}

// PatchScale applies a patch to the Scale of the current object (merge,
// JSON or strategic; apply is refused) and writes its replicas.
func (r *Registry) PatchScale(ctx context.Context, namespace, name string, opts PatchOptions) (*autoscalingv1.Scale, error) {
	if opts.Type == ApplyPatch {
		return nil, apierrors.NewUnsupportedMediaType(opts.Type)
	}
	apply, err := r.patcher(name, opts)
	if err != nil {
		return nil, err
	}
	return r.writeScale(ctx, namespace, name, opts.DryRun, func(cur *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
		b, err := k8sjson.Marshal(cur)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		values, err := patch.DecodeObject(b)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		patched, _, err := apply(values, nil)
		if err != nil {
			return nil, err
		}
		out, err := patch.Marshal(patched)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		next := &autoscalingv1.Scale{}
		if _, err := k8sjson.Unmarshal(out, next, k8sjson.Ignore); err != nil {
			return nil, r.invalidPatch(err)
		}
		return next, nil
	})
}

// writeScale writes the replicas of the Scale that next derives from the
// current one, as the "scale" subresource in managedFields.
func (r *Registry) writeScale(ctx context.Context, namespace, name string, dryRun bool, next func(cur *autoscalingv1.Scale) (*autoscalingv1.Scale, error)) (*autoscalingv1.Scale, error) {
	s, err := r.scalable(name)
	if err != nil {
		return nil, err
	}
	opts := writeOpts{dryRun: dryRun, subresource: "scale"}
	out, err := r.guaranteedUpdate(ctx, namespace, name, opts, func(cur object.Object) (object.Object, error) {
		scale, err := next(r.scaleOf(s, cur))
		if err != nil {
			return nil, err
		}
		if n := scale.GetMetadata().GetName(); n != "" && n != name {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, name))
		}
		if err := r.preconditionRV(scale.GetMetadata().GetResourceVersion(), cur); err != nil {
			return nil, err
		}
		if n := scale.GetSpec().GetReplicas(); n < 0 {
			return nil, apierrors.NewInvalid(apierrors.GroupKind{Group: "autoscaling", Kind: "Scale"}, name, field.ErrorList{
				field.Invalid(field.NewPath("spec", "replicas"), n, "must be greater than or equal to 0"),
			})
		}
		obj := object.Copy(cur)
		s.setReplicas(obj, scale.GetSpec().GetReplicas())
		return obj, nil
	})
	if err != nil {
		return nil, err
	}
	return r.scaleOf(s, out), nil
}
