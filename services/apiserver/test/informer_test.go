package test

import (
	"context"
	"testing"
	"time"

	"podline.dev/pkg/client"
	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
)

// The informer machinery of pkg/client/cache against the real apiserver:
// it syncs, then sees adds, updates and deletes through the gRPC watch.
func TestInformerOverGRPCSeesAddUpdateDelete(t *testing.T) {
	ctx, cancel := context.WithCancel(ctxFor(t))
	defer cancel()
	_, pods := startServer(t)
	if _, err := pods.Create(ctx, pod("before", nil)); err != nil {
		t.Fatal(err)
	}
	inf := cache.NewSharedIndexInformer(&client.ListWatch[*corev1.Pod]{Client: pods, Namespace: "default"}, &corev1.Pod{})
	events := make(chan string, 16)
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o object.Object) { events <- "add " + o.GetMetadata().GetName() },
		UpdateFunc: func(_, o object.Object) { events <- "update " + o.GetMetadata().GetName() },
		DeleteFunc: func(o object.Object) { events <- "delete " + o.GetMetadata().GetName() },
	})
	if err != nil {
		t.Fatal(err)
	}
	go inf.Run(ctx)
	if !cache.WaitForCacheSync(ctx, inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	expect := func(want string) {
		t.Helper()
		select {
		case got := <-events:
			if got != want {
				t.Fatalf("got %q, want %q", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %q within 10s", want)
		}
	}
	expect("add before")
	created, err := pods.Create(ctx, pod("web", nil))
	if err != nil {
		t.Fatal(err)
	}
	expect("add web")
	p := object.Copy(created)
	p.Metadata.Labels = map[string]string{"v": "2"}
	if _, err := pods.Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	expect("update web")
	if _, err := pods.Delete(ctx, "default", "web", nil); err != nil {
		t.Fatal(err)
	}
	expect("delete web")
}
