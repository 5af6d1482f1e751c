package kuberuntime

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"podline.dev/pkg/clock"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/kubelet/internal/events"
	"podline.dev/services/kubelet/internal/poddns"
	"podline.dev/services/kubelet/internal/runtime"
)

type env struct {
	m     *Manager
	rt    *runtime.Fake
	rec   *events.Fake
	clock *clock.Fake
}

func newEnv(t *testing.T) *env {
	c := clock.NewFake(t0)
	rt := runtime.NewFake(c)
	rt.AddImage("img:1", 1<<20)
	e := &env{rt: rt, rec: &events.Fake{}, clock: c}
	e.m = NewManager(Config{Runtime: rt, Recorder: e.rec, Clock: c, RootDir: t.TempDir(),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return e
}

// sync runs one sync from the runtime's current state.
func (e *env) sync(t *testing.T, pod *corev1.Pod) SyncResult {
	t.Helper()
	st, err := GetPodStatus(context.Background(), e.rt, pod.GetMetadata().GetUid())
	if err != nil {
		t.Fatal(err)
	}
	return e.m.SyncPod(context.Background(), SyncInput{Pod: pod, Status: st})
}

func TestSyncStartsTheSandboxThenInitContainersThenTheApp(t *testing.T) {
	e := newEnv(t)
	pod := makePod().init("init").app("web").obj()
	if res := e.sync(t, pod); res.Err != nil {
		t.Fatal(res.Err)
	}
	want := []string{"RunPodSandbox web", "CreateContainer web/init", "StartContainer web/init"}
	if got := e.rt.Calls(); !slices.Equal(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	if e.rt.Attached() != 1 {
		t.Fatal("sandbox not attached to the network")
	}
	e.rt.ResetCalls()
	e.sync(t, pod) // init still running: nothing
	if got := e.rt.Calls(); len(got) != 0 {
		t.Fatalf("calls while init runs: %v", got)
	}
	e.rt.Exit(e.rt.Running("init")[0], 0)
	e.sync(t, pod)
	if got := e.rt.Calls(); !slices.Equal(got, []string{"CreateContainer web/web", "StartContainer web/web"}) {
		t.Fatalf("calls after init: %v", got)
	}
	for _, r := range []string{"Pulled", "Created", "Started"} {
		if !slices.Contains(e.rec.Reasons(), r) {
			t.Fatalf("events %v lack %s", e.rec.Reasons(), r)
		}
	}
}

func TestCrashLoopBackOffDelaysRestartsTenSecondsThenTwenty(t *testing.T) {
	e := newEnv(t)
	pod := makePod().app("web").obj()
	e.sync(t, pod)
	crash := func() { e.clock.Step(time.Second); e.rt.Exit(e.rt.Running("web")[0], 1) }

	crash()
	if res := e.sync(t, pod); len(e.rt.Running("web")) != 1 || res.RequeueAfter != 0 {
		t.Fatalf("first restart held back: %+v", res)
	}
	crash()
	res := e.sync(t, pod)
	if len(e.rt.Running("web")) != 0 || res.RequeueAfter != 10*time.Second || res.Err != nil {
		t.Fatalf("second restart not backed off 10s: %+v running %v", res, e.rt.Running("web"))
	}
	if w := e.m.Reasons.Get("u1")["web"]; w.Reason != ReasonCrashLoopBackOff || !strings.Contains(w.Message, "back-off 10s") {
		t.Fatalf("waiting reason %+v", w)
	}
	e.clock.Step(10 * time.Second)
	e.sync(t, pod)
	if len(e.rt.Running("web")) != 1 {
		t.Fatal("not restarted after the backoff")
	}
	if _, ok := e.m.Reasons.Get("u1")["web"]; ok {
		t.Fatal("reason kept after the restart")
	}
	crash()
	if res := e.sync(t, pod); res.RequeueAfter != 20*time.Second {
		t.Fatalf("third backoff %v, want 20s", res.RequeueAfter)
	}
	if !slices.Contains(e.rec.Reasons(), "BackOff") {
		t.Fatalf("no BackOff event: %v", e.rec.Reasons())
	}
}

func TestImagePullFailureBacksOff(t *testing.T) {
	e := newEnv(t)
	e.rt.SetPullErr(func(string) error { return errors.New("manifest unknown") })
	pod := makePod().app("web").obj()
	pod.Spec.Containers[0].Image = "registry.podline:5000/missing:1"
	res := e.sync(t, pod)
	if w := e.m.Reasons.Get("u1")["web"]; w.Reason != ReasonErrImagePull || res.RequeueAfter != 10*time.Second {
		t.Fatalf("after a failed pull: %+v %+v", w, res)
	}
	e.sync(t, pod)
	if w := e.m.Reasons.Get("u1")["web"]; w.Reason != ReasonImagePullBackOff {
		t.Fatalf("within the backoff: %+v", w)
	}
	pulls := func() int {
		return len(slices.DeleteFunc(e.rt.Calls(), func(c string) bool { return !strings.HasPrefix(c, "PullImage") }))
	}
	if n := pulls(); n != 1 {
		t.Fatalf("%d pulls within the backoff", n)
	}
	e.clock.Step(10 * time.Second)
	e.rt.SetPullErr(nil)
	e.sync(t, pod)
	if pulls() != 2 || len(e.rt.Running("web")) != 1 {
		t.Fatal("not pulled and started after the backoff")
	}
}

func TestImagePullPolicyNeverDoesNotPull(t *testing.T) {
	e := newEnv(t)
	pod := makePod().app("web").obj()
	pod.Spec.Containers[0].Image, pod.Spec.Containers[0].ImagePullPolicy = "absent:1", "Never"
	e.sync(t, pod)
	if w := e.m.Reasons.Get("u1")["web"]; w.Reason != ReasonErrImageNeverPull {
		t.Fatalf("reason %+v", w)
	}
	if slices.ContainsFunc(e.rt.Calls(), func(c string) bool { return strings.HasPrefix(c, "PullImage") }) {
		t.Fatal("pulled with policy Never")
	}
}

func TestKillPodRunsPreStopThenStopsAndReleasesTheNetwork(t *testing.T) {
	e := newEnv(t)
	pod := makePod().app("web").obj()
	pod.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"drain"}}}}
	e.sync(t, pod)
	var hooks []string
	e.rt.SetExecFunc(func(c *runtime.Container, cmd []string) (*runtime.ExecResult, error) {
		hooks = append(hooks, c.Name+":"+strings.Join(cmd, " "))
		return &runtime.ExecResult{}, nil
	})
	st, _ := GetPodStatus(context.Background(), e.rt, "u1")
	if err := e.m.KillPod(context.Background(), pod, st, nil); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(hooks, []string{"web:drain"}) {
		t.Fatalf("preStop hooks %v", hooks)
	}
	if len(e.rt.Running("web")) != 0 || e.rt.Attached() != 0 {
		t.Fatal("container or address left")
	}
	if !slices.Contains(e.rec.Reasons(), "Killing") {
		t.Fatalf("no Killing event: %v", e.rec.Reasons())
	}
	st, _ = GetPodStatus(context.Background(), e.rt, "u1")
	if st.ReadySandbox() != nil || st.Running() {
		t.Fatal("sandbox still ready")
	}
}

func TestGracePeriod(t *testing.T) {
	pod := makePod().app("web").obj()
	if g := gracePeriod(pod, nil, nil); g != 30*time.Second {
		t.Fatalf("default %v", g)
	}
	five, zero := int64(5), int64(0)
	pod.Spec.TerminationGracePeriodSeconds = &five
	if g := gracePeriod(pod, nil, nil); g != 5*time.Second {
		t.Fatalf("spec %v", g)
	}
	if g := gracePeriod(pod, nil, &zero); g != minGracePeriod {
		t.Fatalf("a zero override gives %v, want the 2s minimum", g)
	}
	if g := gracePeriod(nil, nil, nil); g != 30*time.Second {
		t.Fatalf("orphan %v", g)
	}
}

// The sandbox is run with what the runtime needs to set the pod up:
// hostname, cluster DNS, hostPorts, log directory; the kubelet writes
// the managed /etc/hosts with the IP the runtime gave it.
func TestSyncRunsTheSandboxWithDNSHostnameAndPorts(t *testing.T) {
	e := newEnv(t)
	e.m.dns = poddns.Cluster{Servers: []string{"10.96.0.10"}, Domain: "cluster.local"}
	pod := makePod().app("web").obj()
	pod.Spec.Hostname, pod.Spec.Subdomain = "db", "dbs"
	pod.Spec.Containers[0].Ports = []*corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
	if res := e.sync(t, pod); res.Err != nil {
		t.Fatal(res.Err)
	}
	sbs, _ := e.rt.ListPodSandboxes(context.Background(), "")
	if len(sbs) != 1 {
		t.Fatalf("sandboxes %v", sbs)
	}
	cfg := e.rt.SandboxConfig(sbs[0].ID)
	ns := pod.GetMetadata().GetNamespace()
	if cfg.Hostname != "db" || cfg.DNS == nil || strings.Join(cfg.DNS.Servers, ",") != "10.96.0.10" ||
		cfg.DNS.Searches[0] != ns+".svc.cluster.local" || strings.Join(cfg.DNS.Options, ",") != "ndots:5" ||
		len(cfg.Ports) != 1 || cfg.Ports[0].HostPort != 8080 || cfg.Ports[0].Protocol != "TCP" ||
		cfg.LogDir != LogDir(e.m.logsDir, pod) {
		t.Fatalf("sandbox config %+v (dns %+v)", cfg, cfg.DNS)
	}
	hosts, err := os.ReadFile(EtcHostsPath(e.m.rootDir, pod.GetMetadata().GetUid()))
	want := sbs[0].IPs[0] + "\tdb.dbs." + ns + ".svc.cluster.local\tdb\n"
	if err != nil || !strings.Contains(string(hosts), want) {
		t.Fatalf("/etc/hosts %q %v, want a line %q", hosts, err, want)
	}
}
