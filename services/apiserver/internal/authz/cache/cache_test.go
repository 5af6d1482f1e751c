package cache

import (
	"context"
	"testing"
	"time"

	clientcache "podline.dev/pkg/client/cache"
	"podline.dev/pkg/client/cache/cachetest"
	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// registry presents a cachetest.Source the way a registry answers.
type registry struct{ src *cachetest.Source }

func (r registry) List(ctx context.Context, opts *metav1.ListRequest) ([]object.Object, *metav1.ListMeta, error) {
	items, rv, err := r.src.List(ctx, opts)
	return items, &metav1.ListMeta{ResourceVersion: rv}, err
}

func (r registry) Watch(ctx context.Context, opts *metav1.ListRequest) (watch.Interface, error) {
	return r.src.Watch(ctx, opts)
}

func pod(ns, name, node string) *corev1.Pod {
	return &corev1.Pod{Metadata: &metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: &corev1.PodSpec{NodeName: node}}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within 5s: %s", what)
		}
	}
}

func TestCacheFollowsItsSource(t *testing.T) {
	src := cachetest.NewSource(&corev1.Pod{})
	if _, err := src.Create(pod("default", "a", "n1")); err != nil {
		t.Fatal(err)
	}
	byNode := clientcache.Indexers{"node": func(obj object.Object) ([]string, error) {
		return []string{obj.(*corev1.Pod).GetSpec().GetNodeName()}, nil
	}}
	c := New("pods", registry{src}, byNode)
	if c.HasSynced() {
		t.Fatal("synced before running")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Run(ctx)
	eventually(t, "first list", c.HasSynced)
	if _, ok := c.Get("default", "a"); !ok {
		t.Fatal("listed pod missing")
	}

	if _, err := src.Create(pod("kube-system", "b", "n2")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "created pod", func() bool { _, ok := c.Get("kube-system", "b"); return ok })
	if got := c.InNamespace("kube-system"); len(got) != 1 {
		t.Fatalf("InNamespace = %v", got)
	}
	if _, err := src.Update(pod("default", "a", "n2")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "index follows the update", func() bool {
		on, _ := c.ByIndex("node", "n2")
		return len(on) == 2
	})
	// A dropped watch is resumed; later changes still arrive.
	src.DropWatches()
	if err := src.Delete("default", "a"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "deleted pod", func() bool { _, ok := c.Get("default", "a"); return !ok })
	if _, ok := c.Get("", "nope"); ok {
		t.Fatal("cluster-scoped miss found something")
	}
}
