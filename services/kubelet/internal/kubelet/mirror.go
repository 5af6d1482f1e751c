package kubelet

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/kubelet/internal/staticpods"
)

// syncMirror makes the static pod's mirror pod exist and mirror this
// version of it: a missing mirror is created, and one that mirrors
// another version or is being deleted is deleted at once and created
// again (a mirror pod deleted through the API comes back).
func (kl *Kubelet) syncMirror(ctx context.Context, static *corev1.Pod) error {
	if kl.node.Node() == nil {
		return errNotRegistered
	}
	key := object.Key(static)
	hash := static.GetMetadata().GetUid()
	m := kl.manager.mirror(key)
	if m != nil && staticpods.MirrorHash(m) == hash && m.GetMetadata().GetDeletionTimestamp() == nil {
		return nil
	}
	if m != nil {
		if err := kl.deleteMirrorPod(ctx, m); err != nil {
			return err
		}
		kl.log.Info("mirror pod replaced", "pod", key, "deleting", m.GetMetadata().GetDeletionTimestamp() != nil)
	}
	_, err := kl.pods.Create(ctx, staticpods.Mirror(static, kl.node.Node()))
	if apierrors.IsAlreadyExists(err) {
		// One the cache has not seen yet (ours, or a stale one): the
		// informer's next event brings the next sync.
		cur, gerr := kl.pods.Get(ctx, static.GetMetadata().GetNamespace(), static.GetMetadata().GetName())
		if gerr == nil && (staticpods.MirrorHash(cur) != hash || cur.GetMetadata().GetDeletionTimestamp() != nil) {
			if err := kl.deleteMirrorPod(ctx, cur); err != nil {
				return err
			}
			_, err = kl.pods.Create(ctx, staticpods.Mirror(static, kl.node.Node()))
			return err
		}
		return nil
	}
	if err == nil {
		kl.log.Info("mirror pod created", "pod", key)
	}
	return err
}

// errNotRegistered: mirror pods wait until the Node that owns them exists.
var errNotRegistered = errors.New("node not registered yet")

// deleteMirrorPod deletes a mirror pod at once (grace period 0).
func (kl *Kubelet) deleteMirrorPod(ctx context.Context, m *corev1.Pod) error {
	uid := m.GetMetadata().GetUid()
	_, err := kl.pods.Delete(ctx, m.GetMetadata().GetNamespace(), m.GetMetadata().GetName(), &metav1.DeleteOptions{
		GracePeriodSeconds: proto.Int64(0),
		Preconditions:      &metav1.Preconditions{Uid: &uid},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return err
	}
	kl.manager.removeMirror(m)
	return nil
}

// deleteMirror deletes the mirror of a static pod that is gone.
func (kl *Kubelet) deleteMirror(ctx context.Context, static *corev1.Pod) error {
	m := kl.manager.mirror(object.Key(static))
	if m == nil {
		cur, err := kl.pods.Get(ctx, static.GetMetadata().GetNamespace(), static.GetMetadata().GetName())
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		m = cur
	}
	if !staticpods.IsMirror(m) || staticpods.MirrorHash(m) != static.GetMetadata().GetUid() {
		return nil
	}
	return kl.deleteMirrorPod(ctx, m)
}
