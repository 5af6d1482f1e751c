package probes

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"podline.dev/pkg/clock"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/kubelet/internal/events"
	"podline.dev/services/kubelet/internal/runtime"
)

func TestTrackerReportsOnlyAfterTheThresholds(t *testing.T) {
	tr := Tracker{SuccessThreshold: 2, FailureThreshold: 3}
	steps := []struct {
		in     Result
		report bool
	}{
		{Failure, false}, {Failure, false}, {Failure, true}, // three failures in a row
		{Success, false}, {Success, true}, // two successes
		{Failure, false}, {Success, false}, {Failure, false}, {Failure, false}, {Failure, true}, // a run broken restarts
	}
	for i, s := range steps {
		if _, report := tr.Observe(s.in); report != s.report {
			t.Fatalf("step %d (%s): report %v, want %v", i, s.in, report, s.report)
		}
	}
}

// statusSource is a settable StatusProvider.
type statusSource struct {
	mu sync.Mutex
	st *corev1.PodStatus
}

func (s *statusSource) PodStatus(string) (*corev1.PodStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st, s.st != nil
}

func (s *statusSource) set(id string, started bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st = &corev1.PodStatus{Phase: "Running", PodIp: "127.0.0.1", ContainerStatuses: []*corev1.ContainerStatus{{
		Name: "web", ContainerId: "containerd://" + id, Started: &started,
		State: &corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: &metav1.Time{Seconds: 1}}},
	}}}
}

type probeEnv struct {
	m       *Manager
	clock   *clock.Fake
	rt      *runtime.Fake
	status  *statusSource
	changes atomic.Int32
	rec     *events.Fake
}

func newProbeEnv(t *testing.T) *probeEnv {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e := &probeEnv{clock: clock.NewFake(time.Unix(100, 0)), status: &statusSource{}, rec: &events.Fake{}}
	e.rt = runtime.NewFake(e.clock)
	e.m = NewManager(ctx, &Prober{Runtime: e.rt}, e.status, e.rec, e.clock, slog.New(slog.NewTextHandler(io.Discard, nil)),
		func(string) { e.changes.Add(1) })
	return e
}

// runningContainer makes a running container in the fake runtime.
func (e *probeEnv) runningContainer(t *testing.T) string {
	sb, _ := e.rt.RunPodSandbox(context.Background(), &runtime.SandboxConfig{Pod: runtime.PodRef{UID: "u", Name: "p"}})
	e.rt.AddImage("img:1", 1)
	id, err := e.rt.CreateContainer(context.Background(), sb, &runtime.ContainerConfig{Name: "web", Image: "img:1"})
	if err != nil {
		t.Fatal(err)
	}
	_ = e.rt.StartContainer(context.Background(), id)
	return id
}

func probedPod(kind Kind, p *corev1.Probe) *corev1.Pod {
	c := &corev1.Container{Name: "web"}
	switch kind {
	case Liveness:
		c.LivenessProbe = p
	case Readiness:
		c.ReadinessProbe = p
	case Startup:
		c.StartupProbe = p
	}
	return &corev1.Pod{Metadata: &metav1.ObjectMeta{Uid: "u", Name: "p", Namespace: "default"}, Spec: &corev1.PodSpec{Containers: []*corev1.Container{c}}}
}

// waitResult waits for a worker to report r.
func (e *probeEnv) waitResult(t *testing.T, kind Kind, id string, want Result) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if r, _ := e.m.Result(kind, id); r == want {
			return
		}
		if time.Now().After(deadline) {
			r, _ := e.m.Result(kind, id)
			t.Fatalf("%s result %s, want %s", kind, r, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// tick lets a worker finish its round and moves time one period.
func (e *probeEnv) tick(t *testing.T, period time.Duration) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for e.clock.Waiters() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("worker not waiting")
		}
		time.Sleep(time.Millisecond)
	}
	e.clock.Step(period)
}

func TestLivenessFailsAfterItsThresholdAndHoldsUntilReplaced(t *testing.T) {
	e := newProbeEnv(t)
	id := e.runningContainer(t)
	var calls atomic.Int32
	e.rt.SetExecFunc(func(*runtime.Container, []string) (*runtime.ExecResult, error) {
		calls.Add(1)
		return &runtime.ExecResult{ExitCode: 1, Stdout: []byte("boom")}, nil
	})
	e.status.set(id, true)
	e.m.AddPod(probedPod(Liveness, &corev1.Probe{Exec: &corev1.ExecAction{Command: []string{"check"}}, PeriodSeconds: 1, FailureThreshold: 3}))
	e.waitResult(t, Liveness, id, Success) // alive until proven otherwise
	for range 2 {
		e.tick(t, time.Second)
	}
	e.waitResult(t, Liveness, id, Failure)
	if n := calls.Load(); n != 3 {
		t.Fatalf("%d probes before failing, want 3", n)
	}
	for range 3 {
		e.tick(t, time.Second)
	}
	time.Sleep(20 * time.Millisecond)
	if n := calls.Load(); n != 3 {
		t.Fatalf("probed %d times while on hold", n)
	}
	if len(e.rec.Reasons()) != 3 || e.rec.Reasons()[0] != "Unhealthy" {
		t.Fatalf("events %v", e.rec.Events())
	}
	// The container is replaced: probing starts over for the new one.
	id2 := e.runningContainer(t)
	e.status.set(id2, true)
	e.tick(t, time.Second)
	e.waitResult(t, Liveness, id2, Success)
}

func TestReadinessWaitsForTheStartupProbe(t *testing.T) {
	e := newProbeEnv(t)
	id := e.runningContainer(t)
	e.status.set(id, false) // not started yet
	pod := probedPod(Readiness, &corev1.Probe{Exec: &corev1.ExecAction{Command: []string{"ready"}}, PeriodSeconds: 1})
	e.m.AddPod(pod)
	e.waitResult(t, Readiness, id, Failure) // not ready until proven ready
	e.tick(t, time.Second)
	if r, _ := e.m.Result(Readiness, id); r != Failure {
		t.Fatal("ready before the container started")
	}
	e.status.set(id, true)
	e.tick(t, time.Second)
	e.waitResult(t, Readiness, id, Success)
	if e.changes.Load() < 2 {
		t.Fatalf("%d change callbacks", e.changes.Load())
	}
}

func TestAddPodKeepsTheReadinessAContainerHadWhenTheKubeletRestarted(t *testing.T) {
	e := newProbeEnv(t)
	id := e.runningContainer(t)
	e.status.set(id, true)
	pod := probedPod(Readiness, &corev1.Probe{Exec: &corev1.ExecAction{Command: []string{"ready"}}, PeriodSeconds: 100})
	started := true
	pod.Status = &corev1.PodStatus{ContainerStatuses: []*corev1.ContainerStatus{{
		Name: "web", ContainerId: "containerd://" + id, Ready: true, Started: &started,
		State: &corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
	}}}
	e.m.AddPod(pod)
	if r, _ := e.m.Result(Readiness, id); r != Success {
		t.Fatalf("readiness %s after a restart, want the Success last reported", r)
	}
}

func TestHTTPAndTCPProbes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" || r.Header.Get("User-Agent") != UserAgent {
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	host, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	pr := &Prober{}
	target := Target{PodIP: host, Container: &corev1.Container{Ports: []*corev1.ContainerPort{{Name: "http", ContainerPort: int32(p)}}}}
	ctx := context.Background()
	named := &metav1.IntOrString{Type: 1, StrVal: "http"}
	if r, msg, err := pr.Run(ctx, &corev1.Probe{HttpGet: &corev1.HTTPGetAction{Path: "/healthz", Port: named}}, target); r != Success || err != nil {
		t.Fatalf("healthz: %s %s %v", r, msg, err)
	}
	if r, msg, _ := pr.Run(ctx, &corev1.Probe{HttpGet: &corev1.HTTPGetAction{Path: "/nope", Port: named}}, target); r != Failure || msg != "HTTP probe failed with statuscode: 404" {
		t.Fatalf("404: %s %q", r, msg)
	}
	if r, _, _ := pr.Run(ctx, &corev1.Probe{TcpSocket: &corev1.TCPSocketAction{Port: &metav1.IntOrString{IntVal: int32(p)}}}, target); r != Success {
		t.Fatalf("tcp: %s", r)
	}
	srv.Close()
	if r, _, _ := pr.Run(ctx, &corev1.Probe{TcpSocket: &corev1.TCPSocketAction{Port: &metav1.IntOrString{IntVal: int32(p)}}}, target); r != Failure {
		t.Fatalf("tcp to a closed port: %s", r)
	}
}
