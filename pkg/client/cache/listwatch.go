package cache

import (
	"context"

	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	metav1 "podline.dev/proto/meta/v1"
)

// ListerWatcher is the apiserver as a Reflector sees it, for one resource:
// a List that returns the items and the resourceVersion they were read at,
// and a Watch that streams every change after opts.ResourceVersion. The
// typed gRPC client satisfies it through an adapter; cachetest.Source is the
// in-memory one for tests.
//
// The Reflector fills ResourceVersion, AllowWatchBookmarks, TimeoutSeconds,
// Limit and Continue of opts; a ListerWatcher adds its own namespace and
// selectors. A watch from a revision that is no longer available fails, or
// sends an ERROR event, with a 410 error (apierrors.IsTooOld).
type ListerWatcher interface {
	List(ctx context.Context, opts *metav1.ListRequest) (items []object.Object, resourceVersion string, err error)
	Watch(ctx context.Context, opts *metav1.ListRequest) (watch.Interface, error)
}

// ListPager is implemented by a ListerWatcher that can list in pages. When
// the Reflector has a page size (WithPageSize) and its ListerWatcher is a
// ListPager, it lists page by page with opts.Limit and opts.Continue; a
// ListerWatcher that is not a ListPager is listed in one call.
type ListPager interface {
	// ListPage returns up to opts.Limit items from where opts.Continue left
	// off, and the token for the next page, "" after the last one.
	ListPage(ctx context.Context, opts *metav1.ListRequest) (items []object.Object, resourceVersion, continueToken string, err error)
}
