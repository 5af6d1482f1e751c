package compat

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// recorder turns informer notifications into "add web", "update web", ...
type recorder chan string

func (r recorder) handler() cache.ResourceEventHandlerFuncs {
	name := func(obj any) string {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return fmt.Sprintf("%T", obj)
		}
		return m.GetName()
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { r <- "add " + name(obj) },
		UpdateFunc: func(_, obj any) { r <- "update " + name(obj) },
		DeleteFunc: func(obj any) { r <- "delete " + name(obj) },
	}
}

func (r recorder) expect(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-r:
		if got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no %q within 10s", want)
	}
}

// client-go's shared index informer, built by hand from the clientset's
// List and Watch, syncs against podline and then sees every add, update
// and delete; its namespace index answers.
func TestSharedIndexInformerSyncsAndSeesChanges(t *testing.T) {
	ctx, cancel := context.WithCancel(ctxFor(t))
	defer cancel()
	_, cs := start(t)
	pods := cs.CoreV1().Pods(metav1.NamespaceDefault)
	for _, p := range []*corev1.Pod{makePod("before").obj(), makePod("system").namespace(metav1.NamespaceSystem).obj()} {
		if _, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return cs.CoreV1().Pods(metav1.NamespaceAll).Watch(ctx, opts)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	events := make(recorder, 16)
	if _, err := inf.AddEventHandler(events.handler()); err != nil {
		t.Fatal(err)
	}
	go inf.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	initial := map[string]bool{}
	for range 2 {
		select {
		case ev := <-events:
			initial[ev] = true
		case <-time.After(10 * time.Second):
			t.Fatal("no initial add within 10s")
		}
	}
	if !initial["add before"] || !initial["add system"] {
		t.Fatalf("initial adds: %v", initial)
	}
	if inf.LastSyncResourceVersion() == "" {
		t.Fatal("informer has no resourceVersion after sync")
	}

	created, err := pods.Create(ctx, makePod("web").obj(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	events.expect(t, "add web")
	created.Labels = map[string]string{"v": "2"}
	if _, err := pods.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	events.expect(t, "update web")
	if err := pods.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	events.expect(t, "delete web")

	inDefault, err := inf.GetIndexer().ByIndex(cache.NamespaceIndex, metav1.NamespaceDefault)
	if err != nil || len(inDefault) != 1 || inDefault[0].(*corev1.Pod).Name != "before" {
		t.Fatalf("namespace index: %v, %v", inDefault, err)
	}
}

// The informer factory and lister that controllers use, for Deployments:
// the lister follows the server.
func TestInformerFactoryListerFollowsDeployments(t *testing.T) {
	ctx, cancel := context.WithCancel(ctxFor(t))
	defer cancel()
	_, cs := start(t)
	factory := informers.NewSharedInformerFactory(cs, 0)
	deployments := factory.Apps().V1().Deployments()
	events := make(recorder, 16)
	if _, err := deployments.Informer().AddEventHandler(events.handler()); err != nil {
		t.Fatal(err)
	}
	lister := deployments.Lister()
	factory.Start(ctx.Done())
	defer func() { cancel(); factory.Shutdown() }() // Shutdown waits for the informers to stop
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("%v did not sync", typ)
		}
	}

	api := cs.AppsV1().Deployments(metav1.NamespaceDefault)
	d, err := api.Create(ctx, makeDeployment("web", 1), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	events.expect(t, "add web")
	*d.Spec.Replicas = 3
	if _, err := api.Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	events.expect(t, "update web")
	got, err := lister.Deployments(metav1.NamespaceDefault).Get("web")
	if err != nil || *got.Spec.Replicas != 3 {
		t.Fatalf("lister: %v, %v", got, err)
	}
	if err := api.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	events.expect(t, "delete web")
	if all, err := lister.List(labels.Everything()); err != nil || len(all) != 0 {
		t.Fatalf("lister after delete: %v, %v", all, err)
	}
}
