package kubelet

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/kubelet/internal/podworkers"
	"podline.dev/services/kubelet/internal/staticpods"
)

// orphanGrace is the grace period of containers whose pod is gone.
const orphanGrace = 2

// housekeepingLoop cleans up, once both sources have reported, every
// HousekeepingPeriod.
func (kl *Kubelet) housekeepingLoop(ctx context.Context) {
	for _, ch := range []chan struct{}{kl.sourcesReady, kl.staticReady} {
		select {
		case <-ctx.Done():
			return
		case <-ch:
		}
	}
	for {
		if err := kl.housekeeping(ctx); err != nil && ctx.Err() == nil {
			kl.log.Warn("housekeeping", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-kl.clock.After(kl.cfg.HousekeepingPeriod):
		}
	}
}

// housekeeping forgets finished workers of vanished pods, terminates
// what the runtime holds for pods that no longer exist, deletes mirror
// pods without a static pod, and removes stale pod directories.
func (kl *Kubelet) housekeeping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	desired := kl.manager.uids()
	kl.workers.SyncKnownPods(desired)
	known := kl.workers.Known()

	// What the runtime holds, as the last relist saw it.
	held, ok := kl.lastRelist()
	if !ok {
		return nil
	}
	for uid, ref := range held {
		if desired[uid] {
			continue
		}
		if _, ok := known[uid]; ok {
			continue
		}
		kl.log.Info("terminating orphaned pod", "pod", ref.Namespace+"/"+ref.Name, "uid", uid)
		orphan := &corev1.Pod{Metadata: &metav1.ObjectMeta{Uid: uid, Name: ref.Name, Namespace: ref.Namespace}}
		kl.workers.UpdatePod(orphan, podworkers.Kill, proto.Int64(orphanGrace))
	}

	for _, m := range kl.manager.allMirrors() {
		static, ok := kl.manager.staticByKey(object.Key(m))
		if ok && static.GetMetadata().GetUid() == staticpods.MirrorHash(m) {
			continue
		}
		if ok {
			continue // a new version: its sync replaces the mirror
		}
		kl.log.Info("deleting orphaned mirror pod", "pod", object.Key(m))
		if err := kl.deleteMirrorPod(ctx, m); err != nil {
			kl.log.Warn("delete orphaned mirror pod", "pod", object.Key(m), "err", err)
		}
	}

	for _, uid := range kl.volumes.PodUIDs() {
		if desired[uid] {
			continue
		}
		if _, ok := known[uid]; ok {
			continue
		}
		if err := kl.volumes.TearDown(uid); err != nil {
			kl.log.Warn("remove orphaned pod directory", "uid", uid, "err", err)
		}
	}
	kl.kr.GC()
	return nil
}
