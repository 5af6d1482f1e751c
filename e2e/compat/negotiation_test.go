package compat

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"
)

// A clientset built from a bare rest.Config asks for protobuf first and
// JSON second, and sends its bodies as protobuf. podline answers reads in
// JSON, which client-go decodes, and reads Kubernetes' protobuf bodies.
func TestDefaultClientsetReadsJSONAndWritesProtobuf(t *testing.T) {
	ctx := ctxFor(t)
	s, cs := start(t)
	if _, err := cs.CoreV1().Pods(metav1.NamespaceDefault).Create(ctx, makePod("web").obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := config(s)
	cfg.ContentType = ""
	def, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pods := def.CoreV1().Pods(metav1.NamespaceDefault)
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %v, %v", list, err)
	}
	if _, err := pods.Get(ctx, "web", metav1.GetOptions{}); err != nil {
		t.Fatalf("get: %v", err)
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	w.Stop()
	if _, err := pods.Create(ctx, makePod("db").obj(), metav1.CreateOptions{}); err != nil {
		t.Fatalf("protobuf create: %v", err)
	}
	if err := pods.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("protobuf delete: %v", err)
	}
	if _, err := pods.Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after protobuf delete: %v", err)
	}
}

// client-go's pager walks a collection in pages with continue tokens.
func TestListPagesWithContinue(t *testing.T) {
	ctx := ctxFor(t)
	_, cs := start(t)
	pods := cs.CoreV1().Pods(metav1.NamespaceDefault)
	for i := range 5 {
		if _, err := pods.Create(ctx, makePod(fmt.Sprintf("p-%d", i)).obj(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	first, err := pods.List(ctx, metav1.ListOptions{Limit: 2})
	if err != nil || len(first.Items) != 2 || first.Continue == "" || first.RemainingItemCount == nil || *first.RemainingItemCount != 3 {
		t.Fatalf("first page: %+v, %v", first, err)
	}

	pages := 0
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		pages++
		return pods.List(ctx, opts)
	})
	p.PageSize = 2
	var names []string
	err = p.EachListItemWithAlloc(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		names = append(names, obj.(*corev1.Pod).Name)
		return nil
	})
	if err != nil || pages != 3 || fmt.Sprint(names) != "[p-0 p-1 p-2 p-3 p-4]" {
		t.Fatalf("pager: %d pages, %v, %v", pages, names, err)
	}
}
