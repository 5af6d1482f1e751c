package registry

import (
	"context"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/object"
	metav1 "podline.dev/proto/meta/v1"
)

// DeleteCollection deletes every object of a namespace (or of the cluster)
// that the selectors match, each as Delete would with the same options,
// and returns the objects' last states. An object deleted by someone else
// meanwhile is skipped; any other failure stops the call.
func (r *Registry) DeleteCollection(ctx context.Context, req *metav1.DeleteCollectionRequest) ([]object.Object, error) {
	items, _, err := r.List(ctx, &metav1.ListRequest{
		Namespace:     req.GetNamespace(),
		LabelSelector: req.GetLabelSelector(),
		FieldSelector: req.GetFieldSelector(),
	})
	if err != nil {
		return nil, err
	}
	opts := DeleteCollectionOptions(req)
	dryRun := false
	for _, d := range opts.DryRun {
		dryRun = dryRun || d == "All"
	}
	var out []object.Object
	for _, it := range items {
		md := it.GetMetadata()
		obj, err := r.Delete(ctx, md.GetNamespace(), md.GetName(), opts, dryRun)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return out, err
		}
		out = append(out, obj)
	}
	return out, nil
}

// DeleteCollectionOptions merges the options body with the query forms.
func DeleteCollectionOptions(req *metav1.DeleteCollectionRequest) *metav1.DeleteOptions {
	opts := &metav1.DeleteOptions{}
	if req.GetOptions() != nil {
		opts = object.Copy(req.GetOptions())
	}
	if req.GracePeriodSeconds != nil && opts.GracePeriodSeconds == nil {
		opts.GracePeriodSeconds = req.GracePeriodSeconds
	}
	if p := req.GetPropagationPolicy(); p != "" && opts.PropagationPolicy == nil {
		opts.PropagationPolicy = &p
	}
	opts.DryRun = append(opts.DryRun, req.GetDryRun()...)
	return opts
}
