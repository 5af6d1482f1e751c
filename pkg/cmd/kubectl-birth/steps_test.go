package main

import (
	"strings"
	"testing"
	"time"
)

// only drops stepsFor's count of omitted steps.
func only(steps []step, _ int) []step { return steps }

// spanOf builds a span for the tests below.
func spanOf(id, parent, service, name string, attrs ...string) span {
	s := span{ID: id, Parent: parent, Service: service, Name: name, Start: time.Unix(0, 0), Attrs: map[string]string{}}
	for i := 0; i+1 < len(attrs); i += 2 {
		s.Attrs[attrs[i]] = attrs[i+1]
	}
	return s
}

func TestWatchFanOutOfASiblingIsLeftOut(t *testing.T) {
	spans := []span{
		spanOf("rs", "", "controller-manager", "replicaset.sync"),
		spanOf("ca", "rs", "apiserver", "podline.core.v1.Pods/Create", "span.kind", "server"),
		spanOf("ea", "ca", "apiserver", "etcd txn create", "etcd.key", "/registry/pods/default/a"),
		spanOf("na", "ca", "apiserver", "natspub.Publish", "resource", "pods", "key", "default/a"),
		spanOf("cb", "rs", "apiserver", "podline.core.v1.Pods/Create", "span.kind", "server"),
		spanOf("nb", "cb", "apiserver", "natspub.Publish", "resource", "pods", "key", "default/b"),
		spanOf("ne", "cb", "apiserver", "natspub.Publish", "resource", "events", "key", "default/b.1"),
	}
	var got []string
	for _, s := range only(stepsFor(spans, stepOptions{Pod: "default/a"})) {
		got = append(got, s.Name+"@"+s.Detail)
	}
	want := []string{"replicaset.sync@", "podline.core.v1.Pods/Create@", "etcd txn create@/registry/pods/default/a", "natspub.Publish@pods default/a"}
	if len(got) != len(want) {
		t.Fatalf("steps %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d: %q, want %q", i, got[i], want[i])
		}
	}
}

func TestReadyIsTheEndOfFirstReadinessWhenTheTraceHasIt(t *testing.T) {
	var p pod
	cond := time.Date(2026, 11, 30, 10, 0, 1, 0, time.UTC)
	p.Status.Conditions = append(p.Status.Conditions, struct {
		Type               string    `json:"type"`
		Status             string    `json:"status"`
		LastTransitionTime time.Time `json:"lastTransitionTime"`
	}{"Ready", "True", cond})
	start := cond.Add(-300 * time.Millisecond)
	traced := []step{{Component: "kubelet", Name: "FirstReadiness", Start: start, Duration: 1234 * time.Microsecond}}
	if got := readyStep(p, traced); len(got) != 1 || !got[0].Start.Equal(start.Add(1234*time.Microsecond)) {
		t.Errorf("traced: %+v, want Ready at FirstReadiness's end", got)
	}
	if got := readyStep(p, nil); len(got) != 1 || !got[0].Start.Equal(cond) || !got[0].Instant {
		t.Errorf("untraced: %+v, want Ready at the condition's time", got)
	}
	p.Status.Conditions[0].Status = "False"
	if got := readyStep(p, traced); len(got) != 0 {
		t.Errorf("not ready: %+v, want no Ready step", got)
	}
}

func TestSpansWhoseParentHasNotArrivedAreKeptOnlyWithoutSiblings(t *testing.T) {
	spans := []span{
		spanOf("rs", "", "controller-manager", "replicaset.sync"),
		spanOf("ea", "rs", "apiserver", "etcd txn create", "etcd.key", "/registry/pods/default/a"),
		spanOf("eb", "rs", "apiserver", "etcd txn create", "etcd.key", "/registry/pods/default/b"),
		spanOf("sa", "ea", "kubelet", "SyncPod", "pod", "default/a"),
		// b's SyncPod has not reached Jaeger yet: its children hang from nothing.
		spanOf("xb", "syncpod-b", "kubelet", "RunPodSandbox"),
		spanOf("cb", "xb", "kubelet", "CNI ADD"),
	}
	names := func(steps []step) string {
		var out []string
		for _, s := range steps {
			out = append(out, s.Component+"/"+s.Name)
		}
		return strings.Join(out, " ")
	}
	if got, want := names(only(stepsFor(spans, stepOptions{Pod: "default/a"}))), "controller-manager/replicaset.sync apiserver/etcd txn create kubelet/SyncPod"; got != want {
		t.Errorf("with a sibling: %q, want %q", got, want)
	}
	alone := []span{spans[0], spans[1], spans[3], spans[4], spans[5]}
	if got, want := names(only(stepsFor(alone, stepOptions{Pod: "default/a"}))), "controller-manager/replicaset.sync apiserver/etcd txn create kubelet/SyncPod kubelet/RunPodSandbox kubelet/CNI ADD"; got != want {
		t.Errorf("alone: %q, want %q", got, want)
	}
}
