package record_test

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"podline.dev/pkg/client"
	"podline.dev/pkg/client/record"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/telemetry"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
)

func pod(name string) *corev1.Pod {
	return &corev1.Pod{
		ApiVersion: "v1", Kind: "Pod",
		Metadata: &metav1.ObjectMeta{Namespace: "default", Name: name, Uid: "uid-" + name, ResourceVersion: "42",
			Annotations: map[string]string{telemetry.TraceparentAnnotation: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}},
	}
}

func events(t *testing.T, s *apiservertest.Server, ns string) []*corev1.Event {
	t.Helper()
	evs, _, err := client.Events(s.Conn).List(context.Background(), &metav1.ListRequest{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestEventfWritesAKubernetesShapedEvent(t *testing.T) {
	s := apiservertest.Start(t)
	rec := record.NewRecorder(s.Conn, "default-scheduler", "host-1", record.WithClock(clock.NewFake(t0)))
	rec.Eventf(pod("web-x"), record.EventTypeNormal, "Scheduled", "Successfully assigned %s/%s to %s", "default", "web-x", "node-1")
	rec.Shutdown()

	evs := events(t, s, "default")
	if len(evs) != 1 {
		t.Fatalf("%d events, want 1", len(evs))
	}
	ev := evs[0]
	if !regexp.MustCompile(`^web-x\.[0-9a-f]{16}$`).MatchString(ev.GetMetadata().GetName()) {
		t.Errorf("name = %q, want web-x.<16 hex>", ev.GetMetadata().GetName())
	}
	io := ev.GetInvolvedObject()
	if io.GetKind() != "Pod" || io.GetApiVersion() != "v1" || io.GetNamespace() != "default" || io.GetName() != "web-x" || io.GetUid() != "uid-web-x" || io.GetResourceVersion() != "42" {
		t.Errorf("involvedObject = %v", io)
	}
	if ev.GetType() != "Normal" || ev.GetReason() != "Scheduled" || ev.GetMessage() != "Successfully assigned default/web-x to node-1" {
		t.Errorf("type/reason/message = %q %q %q", ev.GetType(), ev.GetReason(), ev.GetMessage())
	}
	if ev.GetSource().GetComponent() != "default-scheduler" || ev.GetSource().GetHost() != "host-1" ||
		ev.GetReportingComponent() != "default-scheduler" || ev.GetReportingInstance() != "host-1" {
		t.Errorf("source = %v, reporting = %q/%q", ev.GetSource(), ev.GetReportingComponent(), ev.GetReportingInstance())
	}
	if ev.GetCount() != 1 || ev.GetFirstTimestamp().GetSeconds() != t0.Unix() || ev.GetLastTimestamp().GetSeconds() != t0.Unix() {
		t.Errorf("count %d first %v last %v", ev.GetCount(), ev.GetFirstTimestamp(), ev.GetLastTimestamp())
	}
	if ev.GetMetadata().GetAnnotations()[telemetry.TraceparentAnnotation] == "" {
		t.Error("the event does not carry the pod's traceparent")
	}
}

func TestIdenticalEventsBumpCountAndLastTimestamp(t *testing.T) {
	s := apiservertest.Start(t)
	clk := clock.NewFake(t0)
	rec := record.NewRecorder(s.Conn, "default-scheduler", "host-1", record.WithClock(clk))
	p := pod("web-y")
	msg := "0/3 nodes are available: 3 Insufficient cpu."
	for range 3 {
		rec.Eventf(p, record.EventTypeWarning, "FailedScheduling", "%s", msg)
		clk.Step(10 * time.Second)
	}
	rec.Eventf(p, record.EventTypeWarning, "FailedScheduling", "%s", "0/3 nodes are available: 3 Insufficient memory.")
	rec.Shutdown()

	evs := events(t, s, "default")
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2 (one aggregated, one with another message)", len(evs))
	}
	var agg *corev1.Event
	for _, ev := range evs {
		if ev.GetMessage() == msg {
			agg = ev
		}
	}
	if agg == nil {
		t.Fatal("no aggregated event")
	}
	if agg.GetCount() != 3 {
		t.Errorf("count = %d, want 3", agg.GetCount())
	}
	if agg.GetFirstTimestamp().GetSeconds() != t0.Unix() || agg.GetLastTimestamp().GetSeconds() != t0.Add(20*time.Second).Unix() {
		t.Errorf("first %v last %v, want %v and +20s", agg.GetFirstTimestamp(), agg.GetLastTimestamp(), t0.Unix())
	}
}

// An event about a container names it in involvedObject.fieldPath, and
// the same event about two containers is two events, as in Kubernetes.
func TestEventfAtNamesThePartOfTheObject(t *testing.T) {
	s := apiservertest.Start(t)
	rec := record.NewRecorder(s.Conn, "kubelet", "node-1", record.WithClock(clock.NewFake(t0)))
	p := pod("web-z")
	for _, c := range []string{"web", "sidecar", "web"} {
		rec.EventfAt(p, "spec.containers{"+c+"}", record.EventTypeNormal, "Pulled", "%s", "Container image already present on machine")
	}
	rec.Shutdown()

	byPath := map[string]int32{}
	for _, ev := range events(t, s, "default") {
		byPath[ev.GetInvolvedObject().GetFieldPath()] = ev.GetCount()
	}
	if len(byPath) != 2 || byPath["spec.containers{web}"] != 2 || byPath["spec.containers{sidecar}"] != 1 {
		t.Errorf("events by fieldPath and count: %v, want web twice and sidecar once", byPath)
	}
}

func TestEventsOfClusterScopedObjectsGoToDefault(t *testing.T) {
	s := apiservertest.Start(t)
	rec := record.NewRecorder(s.Conn, "kubelet", "node-1")
	rec.Eventf(&corev1.Node{Metadata: &metav1.ObjectMeta{Name: "node-1", Uid: "n1"}}, record.EventTypeNormal, "NodeReady", "Node %s status is now: NodeReady", "node-1")
	rec.Shutdown()
	evs := events(t, s, "default")
	if len(evs) != 1 || evs[0].GetInvolvedObject().GetKind() != "Node" || evs[0].GetInvolvedObject().GetNamespace() != "" {
		t.Fatalf("events = %v, want one about Node node-1 in default", evs)
	}
}

func TestRecreatesAnAggregatedEventThatWasDeleted(t *testing.T) {
	s := apiservertest.Start(t)
	clk := clock.NewFake(t0)
	rec := record.NewRecorder(s.Conn, "default-scheduler", "h", record.WithClock(clk))
	p := pod("web-z")
	rec.Eventf(p, record.EventTypeNormal, "Scheduled", "m")
	deadline := time.Now().Add(5 * time.Second)
	for len(events(t, s, "default")) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	ev := events(t, s, "default")[0]
	if _, err := client.Events(s.Conn).Delete(context.Background(), "default", ev.GetMetadata().GetName(), nil); err != nil {
		t.Fatal(err)
	}
	rec.Eventf(p, record.EventTypeNormal, "Scheduled", "m")
	rec.Shutdown()
	evs := events(t, s, "default")
	if len(evs) != 1 || evs[0].GetCount() != 2 {
		t.Fatalf("events = %v, want one with count 2", evs)
	}
}

// blockingConn is an apiserver that answers no call until released.
type blockingConn struct {
	release chan struct{}
	calls   atomic.Int32
}

func (c *blockingConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	c.calls.Add(1)
	<-c.release
	return nil
}

func (c *blockingConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	panic("not used")
}

func TestEventfNeverBlocksAndDropsWhenTheQueueIsFull(t *testing.T) {
	conn := &blockingConn{release: make(chan struct{})}
	rec := record.NewRecorder(conn, "c", "h", record.WithQueueSize(2), record.WithWorkers(1))
	start := time.Now()
	for i := range 100 {
		rec.Eventf(pod("p"), record.EventTypeNormal, "R", "message %d", i)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("100 Eventf calls against a stuck apiserver took %v", d)
	}
	close(conn.release)
	rec.Shutdown()
	// One in flight plus two queued; the rest were dropped.
	if n := conn.calls.Load(); n > 3 {
		t.Errorf("%d writes, want at most 3", n)
	}
}

func TestFakeRecorderFormatsLikeClientGo(t *testing.T) {
	f := record.NewFakeRecorder(1)
	f.Eventf(pod("a"), record.EventTypeWarning, "FailedScheduling", "0/%d nodes are available", 3)
	f.Eventf(pod("a"), record.EventTypeWarning, "Dropped", "full")
	if got := <-f.Events; got != "Warning FailedScheduling 0/3 nodes are available" {
		t.Errorf("got %q", got)
	}
}

// Events about one object reach the apiserver in the order they were
// recorded, whatever the number of workers (the kubelet's Pulled, Created,
// Started are read in that order by `kubectl get events -w`).
func TestEventsOfOneObjectKeepTheirOrder(t *testing.T) {
	s := apiservertest.Start(t)
	rec := record.NewRecorder(s.Conn, "kubelet", "node-1", record.WithWorkers(4))
	const n = 24
	for i := range n {
		rec.Eventf(pod("p"), record.EventTypeNormal, fmt.Sprintf("Step%02d", i), "step %d", i)
	}
	rec.Shutdown()
	evs := events(t, s, "default")
	if len(evs) != n {
		t.Fatalf("%d events, want %d", len(evs), n)
	}
	rv := func(e *corev1.Event) int { v, _ := strconv.Atoi(e.GetMetadata().GetResourceVersion()); return v }
	sort.Slice(evs, func(i, j int) bool { return rv(evs[i]) < rv(evs[j]) })
	for i, e := range evs {
		if want := fmt.Sprintf("Step%02d", i); e.GetReason() != want {
			t.Fatalf("event %d written is %s, want %s", i, e.GetReason(), want)
		}
	}
}
