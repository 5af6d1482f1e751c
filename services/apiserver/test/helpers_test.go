package test

import (
	"context"
	"testing"
	"time"

	"podline.dev/pkg/client"
	"podline.dev/pkg/watch"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
)

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// pod builds a minimal valid Pod.
func pod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		Metadata: &metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels},
		Spec:     &corev1.PodSpec{Containers: []*corev1.Container{{Name: "web", Image: "registry.podline:5000/demo/web:1.0"}}},
	}
}

func startServer(t *testing.T) (*apiservertest.Server, *client.Client[*corev1.Pod]) {
	t.Helper()
	s := apiservertest.Start(t)
	return s, client.Pods(s.Conn)
}

// next reads one event or fails after a timeout.
func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return watch.Event{}
}

func startServerClient(s *apiservertest.Server) *client.Client[*corev1.Pod] {
	return client.Pods(s.Conn)
}
