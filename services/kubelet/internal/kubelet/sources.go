package kubelet

import (
	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/kubelet/internal/podworkers"
	"podline.dev/services/kubelet/internal/staticpods"
)

// handleAPIPod takes a pod bound to this node from the informer.
func (kl *Kubelet) handleAPIPod(pod *corev1.Pod, deleted bool) {
	if staticpods.IsMirror(pod) {
		if deleted {
			kl.manager.removeMirror(pod)
		} else {
			kl.manager.setMirror(pod)
		}
		if static, ok := kl.manager.staticByKey(object.Key(pod)); ok {
			kl.workers.Trigger(static.GetMetadata().GetUid())
		}
		return
	}
	uid := pod.GetMetadata().GetUid()
	if deleted {
		if _, ok := kl.manager.remove(uid); ok {
			kl.workers.UpdatePod(pod, podworkers.Kill, nil)
		}
		kl.admitMu.Lock()
		delete(kl.rejected, uid)
		kl.admitMu.Unlock()
		return
	}
	isNew, changed := kl.manager.set(pod, false)
	switch {
	case isNew:
		kl.workers.UpdatePod(pod, podworkers.Create, nil)
	case changed:
		kl.workers.UpdatePod(pod, podworkers.Update, nil)
	}
}

// handleStaticPods takes the whole set of static pods.
func (kl *Kubelet) handleStaticPods(pods []*corev1.Pod) {
	want := map[string]*corev1.Pod{}
	for _, p := range pods {
		want[p.GetMetadata().GetUid()] = p
	}
	for _, p := range kl.manager.staticPods() {
		uid := p.GetMetadata().GetUid()
		if want[uid] == nil {
			kl.manager.remove(uid)
			kl.log.Info("static pod removed", "pod", object.Key(p))
			kl.workers.UpdatePod(p, podworkers.Kill, nil)
		}
	}
	for uid, p := range want {
		if isNew, _ := kl.manager.set(p, true); isNew {
			kl.log.Info("static pod added", "pod", object.Key(p), "hash", uid)
			kl.workers.UpdatePod(p, podworkers.Create, nil)
		}
	}
	kl.staticSeen.Do(func() { close(kl.staticReady) })
}
