package feed

import (
	"context"

	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	metav1 "podline.dev/proto/meta/v1"
)

// Upstream is the apiserver as a Feeder sees it for one resource: a List
// (at the latest revision, or exactly at one) and a Watch from a revision.
// *client.Client[object.Object] (client.ForResource) is one.
type Upstream interface {
	List(ctx context.Context, opts *metav1.ListRequest) ([]object.Object, *metav1.ListMeta, error)
	Watch(ctx context.Context, opts *metav1.ListRequest) (watch.Interface, error)
}
