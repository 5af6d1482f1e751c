package cache

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// podWrapper builds test pods: makePod("default", "web").Label("app", "web").Node("n1").Obj().
type podWrapper struct{ pod *corev1.Pod }

func makePod(namespace, name string) *podWrapper {
	return &podWrapper{&corev1.Pod{
		ApiVersion: "v1",
		Kind:       "Pod",
		Metadata:   &metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       &corev1.PodSpec{},
	}}
}

func (w *podWrapper) Label(k, v string) *podWrapper {
	if w.pod.Metadata.Labels == nil {
		w.pod.Metadata.Labels = map[string]string{}
	}
	w.pod.Metadata.Labels[k] = v
	return w
}

func (w *podWrapper) Node(name string) *podWrapper { w.pod.Spec.NodeName = name; return w }
func (w *podWrapper) RV(rv string) *podWrapper     { w.pod.Metadata.ResourceVersion = rv; return w }
func (w *podWrapper) Obj() *corev1.Pod             { return w.pod }

// nodeIndexFunc indexes pods by spec.nodeName, as the kubelet and scheduler do.
func nodeIndexFunc(obj object.Object) ([]string, error) {
	return []string{obj.(*corev1.Pod).GetSpec().GetNodeName()}, nil
}

func keysOf(objs []object.Object) []string {
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = object.Key(o)
	}
	slices.Sort(keys)
	return keys
}

func sortedByKey[T object.Object](objs []T) []T {
	slices.SortFunc(objs, func(a, b T) int { return cmp.Compare(object.Key(a), object.Key(b)) })
	return objs
}

// eventually polls cond until it holds, failing the test after 10 seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
