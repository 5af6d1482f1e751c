package grpcdyn

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	"podline.dev/proto/apis"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

func TestUnaryHandlerDecodesAndRunsInterceptors(t *testing.T) {
	in, err := FindMessage("podline.meta.v1.GetRequest")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FindMessage("podline.meta.v1.NoSuchMessage"); err == nil {
		t.Error("FindMessage of an unknown message succeeded")
	}
	h := UnaryHandler("/svc/Get", in, func(_ context.Context, req proto.Message) (proto.Message, error) {
		return &metav1.Status{Message: "got " + req.(*metav1.GetRequest).GetName()}, nil
	})
	dec := func(m any) error { m.(*metav1.GetRequest).Name = "web"; return nil }
	out, err := h(nil, context.Background(), dec, nil)
	if err != nil || out.(*metav1.Status).GetMessage() != "got web" {
		t.Fatalf("without interceptor: %v %v", out, err)
	}
	var method string
	ic := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		method = info.FullMethod
		return next(ctx, req)
	}
	if out, err = h(nil, context.Background(), dec, ic); err != nil || method != "/svc/Get" || out.(*metav1.Status).GetMessage() != "got web" {
		t.Fatalf("with interceptor: %v %v method %q", out, err, method)
	}
	bad := errors.New("bad body")
	if _, err := h(nil, context.Background(), func(any) error { return bad }, nil); !errors.Is(err, bad) {
		t.Errorf("decode error lost: %v", err)
	}
}

func TestMessagesListAndBookmark(t *testing.T) {
	res, ok := apis.ByMessage("podline.core.v1.Pod")
	if !ok {
		t.Fatal("no pods resource")
	}
	m, err := MessagesOf(res)
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: "a"}}
	l := m.List([]object.Object{pod}, &metav1.ListMeta{ResourceVersion: "7"}).(*corev1.PodList)
	if l.GetApiVersion() != "v1" || l.GetKind() != "PodList" || len(l.GetItems()) != 1 || l.GetMetadata().GetResourceVersion() != "7" {
		t.Errorf("list: %v", l)
	}
	bm := &corev1.Pod{Metadata: &metav1.ObjectMeta{ResourceVersion: "9"}}
	e := m.Event(watch.Event{Type: watch.Bookmark, Object: bm}).(*corev1.PodWatchEvent)
	if e.GetType() != "BOOKMARK" || e.GetObject().GetKind() != "Pod" || e.GetObject().GetApiVersion() != "v1" {
		t.Errorf("bookmark: %v", e)
	}
	if bm.GetKind() != "" {
		t.Error("the bookmark's object was changed in place")
	}
}
