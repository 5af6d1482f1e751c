package kubelet

import (
	"maps"
	"sync"

	"podline.dev/pkg/object"
	"podline.dev/pkg/telemetry"
	corev1 "podline.dev/proto/core/v1"
)

// podManager holds the pods the kubelet should run, by UID, from both
// sources, and the mirror pods by namespace/name.
type podManager struct {
	mu      sync.RWMutex
	pods    map[string]*corev1.Pod
	static  map[string]bool
	mirrors map[string]*corev1.Pod
}

func newPodManager() *podManager {
	return &podManager{pods: map[string]*corev1.Pod{}, static: map[string]bool{}, mirrors: map[string]*corev1.Pod{}}
}

func (m *podManager) get(uid string) (*corev1.Pod, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	p, ok := m.pods[uid]
	return p, ok
}

func (m *podManager) isStatic(uid string) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.static[uid]
}

// set stores a pod and reports whether it is new and whether it changed
// in a way a sync must see (not only its status or traceparent).
func (m *podManager) set(pod *corev1.Pod, static bool) (isNew, changed bool) {
	uid := pod.GetMetadata().GetUid()
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.pods[uid]
	m.pods[uid] = pod
	if static {
		m.static[uid] = true
	}
	return !ok, ok && differ(old, pod)
}

func (m *podManager) remove(uid string) (*corev1.Pod, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.pods[uid]
	delete(m.pods, uid)
	delete(m.static, uid)
	return p, ok
}

func (m *podManager) uids() map[string]bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make(map[string]bool, len(m.pods))
	for uid := range m.pods {
		out[uid] = true
	}
	return out
}

func (m *podManager) staticPods() []*corev1.Pod {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []*corev1.Pod
	for uid := range m.static {
		out = append(out, m.pods[uid])
	}
	return out
}

// byName finds a pod by namespace and name (a static pod by its name too).
func (m *podManager) byName(namespace, name string) (*corev1.Pod, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, p := range m.pods {
		if p.GetMetadata().GetNamespace() == namespace && p.GetMetadata().GetName() == name {
			return p, true
		}
	}
	return nil, false
}

func (m *podManager) setMirror(pod *corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mirrors[object.Key(pod)] = pod
}

func (m *podManager) removeMirror(pod *corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur := m.mirrors[object.Key(pod)]; cur != nil && cur.GetMetadata().GetUid() == pod.GetMetadata().GetUid() {
		delete(m.mirrors, object.Key(pod))
	}
}

func (m *podManager) mirror(key string) *corev1.Pod {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.mirrors[key]
}

func (m *podManager) allMirrors() []*corev1.Pod {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*corev1.Pod, 0, len(m.mirrors))
	for _, p := range m.mirrors {
		out = append(out, p)
	}
	return out
}

// staticByKey finds the static pod a mirror pod mirrors.
func (m *podManager) staticByKey(key string) (*corev1.Pod, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for uid := range m.static {
		if p := m.pods[uid]; object.Key(p) == key {
			return p, true
		}
	}
	return nil, false
}

// differ reports a change a sync must act on: spec, labels, annotations
// (but the traceparent), deletion.
func differ(a, b *corev1.Pod) bool {
	am, bm := a.GetMetadata(), b.GetMetadata()
	if (am.GetDeletionTimestamp() == nil) != (bm.GetDeletionTimestamp() == nil) ||
		am.GetDeletionGracePeriodSeconds() != bm.GetDeletionGracePeriodSeconds() ||
		!maps.Equal(am.GetLabels(), bm.GetLabels()) {
		return true
	}
	aa, ba := maps.Clone(am.GetAnnotations()), maps.Clone(bm.GetAnnotations())
	delete(aa, telemetry.TraceparentAnnotation)
	delete(ba, telemetry.TraceparentAnnotation)
	if !maps.Equal(aa, ba) {
		return true
	}
	return !protoEqual(a.GetSpec(), b.GetSpec())
}
