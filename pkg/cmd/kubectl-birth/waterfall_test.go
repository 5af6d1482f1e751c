package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// recordedTrace is testdata/deploy-trace.json: the shape of Jaeger's
// answer for a Deployment "web" of 2 replicas (x2kqp on worker-1, m4zlw on
// worker-2), with the gRPC plumbing and Event writes a real trace holds.
func recordedTrace(t *testing.T) []span {
	t.Helper()
	body, err := os.ReadFile("testdata/deploy-trace.json")
	if err != nil {
		t.Fatal(err)
	}
	spans, err := decodeTrace(body)
	if err != nil {
		t.Fatal(err)
	}
	return spans
}

const firstPod = "default/web-7c9d8f6b5-x2kqp"

func TestWaterfallOfOnePodOfADeployment(t *testing.T) {
	steps := only(stepsFor(recordedTrace(t), stepOptions{Pod: firstPod}))
	ready := time.Date(2025, 11, 30, 10, 53, 22, 0, time.UTC) // 1764500002: the API's whole second
	steps = append(steps, step{Component: "pod", Name: "Ready", Start: ready, Instant: true})
	var b bytes.Buffer
	if err := renderWaterfall(&b, steps, 120); err != nil {
		t.Fatal(err)
	}
	golden(t, "web-x2kqp.golden", b.Bytes())
	for _, line := range strings.Split(b.String(), "\n") {
		if n := len([]rune(line)); n > 120 {
			t.Errorf("line of %d columns in a 120-column terminal: %q", n, line)
		}
	}
}

func TestAllSpansKeepsPlumbingButNotTheSiblingPod(t *testing.T) {
	var b bytes.Buffer
	if err := renderWaterfall(&b, only(stepsFor(recordedTrace(t), stepOptions{Pod: firstPod, AllSpans: true})), 100); err != nil {
		t.Fatal(err)
	}
	golden(t, "web-x2kqp-all-spans.golden", b.Bytes())
}

func TestStepsOfAPodLeaveOutItsSibling(t *testing.T) {
	steps := only(stepsFor(recordedTrace(t), stepOptions{Pod: firstPod}))
	count := map[string]int{}
	components := map[string]bool{}
	for _, s := range steps {
		count[s.Component+"/"+s.Name]++
		components[s.Component] = true
		if strings.Contains(s.Detail, "m4zlw") || strings.Contains(s.Detail, "worker-2") && s.Name != "Score" {
			t.Errorf("step %s/%s is about the sibling pod: %s", s.Component, s.Name, s.Detail)
		}
		if strings.Contains(s.Detail, "/registry/events/") || strings.Contains(s.Name, "Events/") {
			t.Errorf("event write kept: %+v", s)
		}
	}
	for _, c := range []string{"apiserver", "etcd", "controller-manager", "scheduler", "kubelet"} {
		if !components[c] {
			t.Errorf("no step from %s", c)
		}
	}
	want := map[string]int{
		"controller-manager/deployment.sync": 1, "controller-manager/replicaset.sync": 1,
		"scheduler/SchedulePod": 1, "scheduler/Bind": 1, "kubelet/SyncPod": 1, "kubelet/RunPodSandbox": 1,
		"kubelet/CNI ADD": 1, "kubelet/PullImage": 1, "kubelet/CreateContainer": 1, "kubelet/StartContainer": 1,
		"kubelet/FirstReadiness": 1, "scheduler/Reserve": 0,
		// Only this pod's create: the sibling's is left out, and each gRPC
		// call is drawn once, by its server.
		"apiserver/podline.core.v1.Pods/Create": 1, "controller-manager/podline.core.v1.Pods/Create": 0,
		"apiserver/podline.apps.v1.Deployments/Create": 0,
		// The status writes of the first reconciles are drawn, the
		// reconciles they set off are not; nor is the runtime library's
		// work under the kubelet's steps.
		"apiserver/podline.apps.v1.ReplicaSets/UpdateStatus": 1, "apiserver/podline.core.v1.Pods/UpdateStatus": 1,
		"kubelet/pull.fetch": 0, "kubelet/container.NewTask": 0, "kubelet/remotes.docker.resolver.HTTPRequest": 0,
	}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("%s: %d steps, want %d", k, count[k], n)
		}
	}
	if _, omitted := stepsFor(recordedTrace(t), stepOptions{Pod: firstPod}); omitted != 2 {
		t.Errorf("%d steps after Ready left out, want the later SyncPod and RunPodSandbox", omitted)
	}
	var sched step
	for _, s := range steps {
		if s.Name == "SchedulePod" {
			sched = s
		}
	}
	// worker-2 ties worker-1 and is ranked first; worker-1 won the tie.
	if !strings.Contains(sched.Detail, "node worker-1") || !strings.Contains(sched.Detail, "score worker-1 total=187") {
		t.Errorf("SchedulePod detail %q lacks the winning node and its score", sched.Detail)
	}
}

func TestChildrenFollowTheirParentInStartOrder(t *testing.T) {
	steps := only(stepsFor(recordedTrace(t), stepOptions{Pod: firstPod}))
	var kubelet []string
	for _, s := range steps {
		if s.Component == "kubelet" {
			kubelet = append(kubelet, strings.Repeat(">", s.Depth)+s.Name)
		}
	}
	got := strings.Join(kubelet, " ")
	want := strings.Join([]string{"SyncPod", ">Admit", ">FirstReadiness", ">MountVolumes", ">RunPodSandbox", ">>CNI ADD", ">PullImage", ">CreateContainer", ">StartContainer"}, " ")
	if got != want {
		t.Errorf("kubelet steps %q, want %q", got, want)
	}
}

func TestBarsScaleToTheWidth(t *testing.T) {
	t0 := time.Unix(1000, 0)
	steps := []step{
		{Component: "a", Name: "whole", Start: t0, Duration: time.Second},
		{Component: "b", Name: "second-half", Start: t0.Add(500 * time.Millisecond), Duration: 500 * time.Millisecond},
		{Component: "c", Name: "mark", Start: t0.Add(250 * time.Millisecond), Instant: true},
	}
	for _, width := range []int{60, 100, 200} {
		var b bytes.Buffer
		if err := renderWaterfall(&b, steps, width); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
		whole := strings.Count(lines[1], "█")
		half := strings.Count(lines[2], "█")
		if len([]rune(lines[1])) != width || whole < 2*half-2 || whole > 2*half+2 {
			t.Errorf("width %d: whole bar %d cells in a %d-column line, half bar %d\n%s", width, whole, len([]rune(lines[1])), half, b.String())
		}
		if i := strings.IndexRune(lines[3], '◆'); i < 0 {
			t.Errorf("width %d: no instant marker: %q", width, lines[3])
		}
	}
}

func TestDecodeTraceReadsJaegersShapes(t *testing.T) {
	body, _ := json.Marshal(map[string]any{"data": []any{map[string]any{
		"traceID": "t", "processes": map[string]any{"p1": map[string]any{"serviceName": "kubelet"}},
		"spans": []any{map[string]any{
			"spanID": "s2", "operationName": "CNI ADD", "processID": "p1", "startTime": 1_000_000, "duration": 1500,
			"references": []any{map[string]any{"refType": "CHILD_OF", "spanID": "s1"}},
			"tags": []any{
				map[string]any{"key": "ips", "type": "string", "value": `["10.244.1.5","fd00::5"]`},
				map[string]any{"key": "attempt", "type": "int64", "value": 2},
				map[string]any{"key": "present", "type": "bool", "value": true},
			},
		}},
	}}})
	spans, err := decodeTrace(body)
	if err != nil {
		t.Fatal(err)
	}
	s := spans[0]
	if s.Service != "kubelet" || s.Parent != "s1" || s.Duration != 1500*time.Microsecond || !s.Start.Equal(time.Unix(1, 0)) {
		t.Errorf("span %+v", s)
	}
	if s.Attrs["ips"] != "10.244.1.5,fd00::5" || s.Attrs["attempt"] != "2" || s.Attrs["present"] != "true" {
		t.Errorf("attrs %v", s.Attrs)
	}
	if _, err := decodeTrace([]byte(`{"data":[],"errors":[{"code":404,"msg":"trace not found"}]}`)); err != errNoTrace {
		t.Errorf("empty answer: %v, want errNoTrace", err)
	}
}

func TestAnInstantBeforeTheFirstSpanDoesNotMoveTimeZero(t *testing.T) {
	t0 := time.Unix(1000, 400_000_000)
	steps := []step{
		{Component: "apiserver", Name: "POST", Start: t0, Duration: 200 * time.Millisecond},
		// The Ready condition keeps whole seconds: it reads 400ms before the request.
		{Component: "pod", Name: "Ready", Start: time.Unix(1000, 0), Instant: true},
	}
	var b bytes.Buffer
	if err := renderWaterfall(&b, steps, 80); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.Contains(lines[1], " +0µs ") || !strings.Contains(lines[2], " -400ms ") || !strings.Contains(lines[2], "◆") {
		t.Errorf("want the request at +0µs and Ready at -400ms:\n%s", b.String())
	}
}

func TestTimesKnownToTheSecondDoNotSetTimeZeroOfEvents(t *testing.T) {
	first := time.Date(2026, 11, 30, 10, 0, 0, 350_000_000, time.UTC)
	var scheduled, started event
	scheduled.Metadata.Name = fmt.Sprintf("web.%x", first.UnixNano())
	scheduled.FirstTimestamp, scheduled.Reason = first.Truncate(time.Second), "Scheduled"
	started.Metadata.Name = "web.not-hex" // an Event from a recorder that names them otherwise
	started.FirstTimestamp, started.Reason = first.Truncate(time.Second).Add(2*time.Second), "Started"
	steps := eventSteps([]event{started, scheduled})
	steps = append(steps, step{Component: "pod", Name: "Ready", Start: first.Truncate(time.Second), Instant: true, Coarse: true})
	var b bytes.Buffer
	if err := renderWaterfall(&b, steps, 80); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.Contains(lines[1], "Scheduled") || !strings.Contains(lines[1], " +0µs ") ||
		!strings.Contains(lines[2], "Started") || !strings.Contains(lines[2], " +1.65s ") || !strings.Contains(lines[3], " -350ms ") {
		t.Errorf("want Scheduled at +0µs (its name's nanoseconds), Started at +1.65s, Ready at -350ms:\n%s", b.String())
	}
}
