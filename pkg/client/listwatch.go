package client

import (
	"context"

	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	metav1 "podline.dev/proto/meta/v1"
)

// ListWatch adapts a Client to the informers: it lists and watches one
// namespace ("" for all) with fixed selectors, and pages when asked.
type ListWatch[T object.Object] struct {
	Client        *Client[T]
	Namespace     string
	LabelSelector string
	FieldSelector string
}

var (
	_ cache.ListerWatcher = (*ListWatch[object.Object])(nil)
	_ cache.ListPager     = (*ListWatch[object.Object])(nil)
)

func (lw *ListWatch[T]) options(opts *metav1.ListRequest) *metav1.ListRequest {
	o := &metav1.ListRequest{}
	if opts != nil {
		o = object.Copy(opts)
	}
	o.Namespace = lw.Namespace
	o.LabelSelector = lw.LabelSelector
	o.FieldSelector = lw.FieldSelector
	return o
}

// List lists the whole collection.
func (lw *ListWatch[T]) List(ctx context.Context, opts *metav1.ListRequest) ([]object.Object, string, error) {
	items, rv, _, err := lw.ListPage(ctx, opts)
	return items, rv, err
}

// ListPage lists one page.
func (lw *ListWatch[T]) ListPage(ctx context.Context, opts *metav1.ListRequest) ([]object.Object, string, string, error) {
	items, lm, err := lw.Client.List(ctx, lw.options(opts))
	if err != nil {
		return nil, "", "", err
	}
	out := make([]object.Object, len(items))
	for i, it := range items {
		out[i] = it
	}
	return out, lm.GetResourceVersion(), lm.GetContinue(), nil
}

// Watch watches the collection.
func (lw *ListWatch[T]) Watch(ctx context.Context, opts *metav1.ListRequest) (watch.Interface, error) {
	return lw.Client.Watch(ctx, lw.options(opts))
}
