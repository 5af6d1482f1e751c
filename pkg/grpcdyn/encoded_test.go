package grpcdyn

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/watch"
	"podline.dev/proto/apis"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

func TestEventMemoEncodesOnceAndCodecSendsTheBytes(t *testing.T) {
	res, _ := apis.ByMessage("podline.core.v1.Pod")
	msgs, err := MessagesOf(res)
	if err != nil {
		t.Fatal(err)
	}
	var memo EventMemo
	pod := &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: "web", Namespace: "default", ResourceVersion: "12"}}
	added := watch.Event{Type: watch.Added, Object: pod}

	first, err := memo.Message(added, msgs)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := memo.Message(added, msgs)
	a, b := first.(encodedEvent), again.(encodedEvent)
	if &a[0] != &b[0] {
		t.Error("the same event was encoded twice")
	}
	deleted, _ := memo.Message(watch.Event{Type: watch.Deleted, Object: pod}, msgs)
	if string(deleted.(encodedEvent)) == string(a) {
		t.Error("a DELETED of the same object got the ADDED event's bytes")
	}

	wire, err := codec{protoCodec()}.Marshal(first)
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.PodWatchEvent
	if err := proto.Unmarshal(wire.Materialize(), &got); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(&got, msgs.Event(added)) {
		t.Errorf("on the wire %v, want %v", &got, msgs.Event(added))
	}

	// Other messages are plain proto.
	status := &metav1.Status{Message: "x"}
	wire, err = codec{protoCodec()}.Marshal(status)
	if err != nil {
		t.Fatal(err)
	}
	var back metav1.Status
	if err := proto.Unmarshal(wire.Materialize(), &back); err != nil || back.GetMessage() != "x" {
		t.Errorf("status round trip: %v %v", &back, err)
	}

	// A bookmark's object is its own: never memoized.
	bm, _ := memo.Message(watch.Event{Type: watch.Bookmark, Object: &corev1.Pod{Metadata: &metav1.ObjectMeta{ResourceVersion: "13"}}}, msgs)
	if e, ok := bm.(*corev1.PodWatchEvent); !ok || e.GetType() != "BOOKMARK" || e.GetObject().GetKind() != "Pod" {
		t.Errorf("bookmark: %#v", bm)
	}
}
