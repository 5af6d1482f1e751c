package controller

import (
	"context"
	"fmt"
	"sync"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/labels"
	"podline.dev/pkg/object"
	"podline.dev/pkg/telemetry"
	"podline.dev/proto/apis"
	metav1 "podline.dev/proto/meta/v1"
)

// RefManager claims objects for one controller, as Kubernetes'
// ControllerRefManager does: an orphan its selector matches is adopted (the
// controller's ownerReference is added), an object it controls that its
// selector no longer matches is released (the reference is removed), and an
// object another controller owns is left alone. Writes are updates with the
// cached resourceVersion, so a stale cache yields a conflict and a retry,
// never a lost change.
type RefManager[T object.Object] struct {
	controller object.Object
	resource   apis.Resource
	selector   labels.Selector
	client     *client.Client[T]
	// recheck reads the controller fresh from the apiserver before the first
	// adoption: a controller that was deleted, or replaced by one of the same
	// name, must not adopt.
	recheck func(ctx context.Context) (object.Object, error)

	once     sync.Once
	adoptErr error
}

// NewRefManager returns the claim logic of controller (of resource res) over
// objects of T reached through c. recheck reads the controller fresh.
func NewRefManager[T object.Object](controller object.Object, res apis.Resource, selector labels.Selector, c *client.Client[T], recheck func(ctx context.Context) (object.Object, error)) *RefManager[T] {
	return &RefManager[T]{controller: controller, resource: res, selector: selector, client: c, recheck: recheck}
}

// Claim returns the objects the controller owns after adopting and
// releasing. It keeps going past a failed adoption or release and returns
// the first error with what it claimed.
func (m *RefManager[T]) Claim(ctx context.Context, objs []T) ([]T, error) {
	var claimed []T
	var firstErr error
	for _, obj := range objs {
		got, ok, err := m.claimOne(ctx, obj)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if ok {
			claimed = append(claimed, got)
		}
	}
	return claimed, firstErr
}

func (m *RefManager[T]) claimOne(ctx context.Context, obj T) (T, bool, error) {
	var zero T
	cmd := m.controller.GetMetadata()
	md := obj.GetMetadata()
	match := m.selector.Matches(md.GetLabels())
	if ref := GetControllerOf(obj); ref != nil {
		if ref.GetUid() != cmd.GetUid() {
			return zero, false, nil // someone else's
		}
		if match {
			return obj, true, nil
		}
		if cmd.GetDeletionTimestamp() != nil {
			return zero, false, nil
		}
		if err := m.release(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return zero, false, err
		}
		return zero, false, nil
	}
	// An orphan.
	if cmd.GetDeletionTimestamp() != nil || !match || md.GetDeletionTimestamp() != nil {
		return zero, false, nil
	}
	if cmd.GetNamespace() != md.GetNamespace() {
		return zero, false, nil
	}
	adopted, err := m.adopt(ctx, obj)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return zero, false, nil
		}
		return zero, false, err
	}
	return adopted, true, nil
}

func (m *RefManager[T]) canAdopt(ctx context.Context) error {
	m.once.Do(func() {
		if m.recheck == nil {
			return
		}
		fresh, err := m.recheck(ctx)
		if err != nil {
			m.adoptErr = err
			return
		}
		want := m.controller.GetMetadata()
		if fresh.GetMetadata().GetUid() != want.GetUid() {
			m.adoptErr = fmt.Errorf("%w: %s %s/%s has uid %s, wanted %s", ErrOwnerGone, m.resource.Kind,
				want.GetNamespace(), want.GetName(), fresh.GetMetadata().GetUid(), want.GetUid())
			return
		}
		if fresh.GetMetadata().GetDeletionTimestamp() != nil {
			m.adoptErr = fmt.Errorf("%w: %s %s/%s is being deleted", ErrOwnerGone, m.resource.Kind, want.GetNamespace(), want.GetName())
		}
	})
	return m.adoptErr
}

func (m *RefManager[T]) adopt(ctx context.Context, obj T) (T, error) {
	var zero T
	if err := m.canAdopt(ctx); err != nil {
		return zero, err
	}
	cp := object.Copy(obj)
	md := cp.GetMetadata()
	md.OwnerReferences = append(md.OwnerReferences, NewControllerRef(m.controller, m.resource))
	telemetry.Stamp(ctx, cp)
	return m.client.Update(ctx, cp)
}

func (m *RefManager[T]) release(ctx context.Context, obj T) error {
	cp := object.Copy(obj)
	md := cp.GetMetadata()
	uid := m.controller.GetMetadata().GetUid()
	kept := md.OwnerReferences[:0]
	for _, ref := range md.OwnerReferences {
		if ref.GetUid() != uid {
			kept = append(kept, ref)
		}
	}
	md.OwnerReferences = kept
	telemetry.Stamp(ctx, cp)
	_, err := m.client.Update(ctx, cp)
	return err
}

// RemoveOwnerRefs returns refs without those whose UID is in uids.
func RemoveOwnerRefs(refs []*metav1.OwnerReference, uids map[string]bool) []*metav1.OwnerReference {
	var out []*metav1.OwnerReference
	for _, r := range refs {
		if !uids[r.GetUid()] {
			out = append(out, r)
		}
	}
	return out
}
