package test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"podline.dev/pkg/client"
	"podline.dev/pkg/clock"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/kubelet/internal/kubelet"
	"podline.dev/services/kubelet/internal/nodestatus"
	"podline.dev/services/kubelet/internal/poddns"
	"podline.dev/services/kubelet/internal/resource"
	"podline.dev/services/kubelet/internal/runtime"
)

const nodeName = "node-1"

func testLogger() *slog.Logger {
	if os.Getenv("KUBELET_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// fakeNode is a kubelet in-process on the fake runtime (whose pod
// network is in memory).
type fakeNode struct {
	api     *apiservertest.Server
	kl      *kubelet.Kubelet
	runtime *runtime.Fake
	pods    *client.Client[*corev1.Pod]
	cancel  context.CancelFunc
	done    chan struct{}
}

type fakeOpts struct {
	// noAPI points the kubelet at an address where no apiserver answers.
	noAPI     bool
	staticDir string
	taints    []*corev1.Taint
	capacity  resource.List
}

// startFakeNode runs a kubelet with short timers on the fake runtime.
func startFakeNode(t *testing.T, api *apiservertest.Server, o fakeOpts) *fakeNode {
	t.Helper()
	if api == nil && !o.noAPI {
		api = apiservertest.Start(t)
	}
	addr := "127.0.0.1:1" // nothing listens there
	if api != nil {
		addr = api.Addr
	}
	rt := runtime.NewFake(clock.Real{})
	rt.AddImage("podline/pause:3.10", 1<<20)
	rt.AddImage("registry.podline:5000/demo/web:1.0", 8<<20)
	capacity := o.capacity
	if capacity == nil {
		capacity = resource.List{resource.CPU: 2000, resource.Memory: 4 << 30, resource.Pods: 110}
	}
	kl, err := kubelet.New(kubelet.Config{
		NodeName:           nodeName,
		NodeIPs:            []string{"172.18.0.3"},
		PodCIDR:            "10.244.1.0/24",
		Taints:             o.taints,
		RootDir:            t.TempDir(),
		ClusterDNS:         poddns.Cluster{Servers: []string{"10.96.0.10"}, Domain: "cluster.local"},
		StaticPodPath:      o.staticDir,
		Capacity:           capacity,
		KubeletPort:        10250,
		Resync:             500 * time.Millisecond,
		RelistPeriod:       50 * time.Millisecond,
		HousekeepingPeriod: 100 * time.Millisecond,
		StaticPodPeriod:    50 * time.Millisecond,
		NodeStatus: nodestatus.Config{
			RenewInterval: 200 * time.Millisecond, UpdateInterval: 100 * time.Millisecond, ReportInterval: time.Second,
			Info: kubelet.SystemInfo("amd64", "fake://0.1.0"),
		},
	}, kubelet.Deps{Conn: tracedConn(t, addr), Runtime: rt, Clock: clock.Real{}, Log: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &fakeNode{api: api, kl: kl, runtime: rt, cancel: cancel, done: make(chan struct{})}
	if api != nil {
		n.pods = client.Pods(api.Conn)
	}
	go func() {
		defer close(n.done)
		if err := kl.Run(ctx); err != nil && ctx.Err() == nil {
			t.Errorf("kubelet: %v", err)
		}
	}()
	t.Cleanup(n.stop)
	return n
}

func (n *fakeNode) stop() {
	n.cancel()
	<-n.done
}

// tracedConn connects as the kubelet binary does: with trace context
// carried on every call.
func tracedConn(t testing.TB, addr string) *grpc.ClientConn {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStatsHandler(otelgrpc.NewClientHandler()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// eventually polls cond until it holds or the time is up.
func eventually(t testing.TB, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	last := ""
	for {
		ok, why := cond()
		if ok {
			return
		}
		if why != "" {
			last = why
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (last: %s)", what, d, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func condition(p *corev1.Pod, typ string) string {
	for _, c := range p.GetStatus().GetConditions() {
		if c.GetType() == typ {
			return c.GetStatus()
		}
	}
	return ""
}

func describe(p *corev1.Pod) string {
	if p == nil {
		return "<nil>"
	}
	s := fmt.Sprintf("phase=%s reason=%s", p.GetStatus().GetPhase(), p.GetStatus().GetReason())
	for _, c := range p.GetStatus().GetConditions() {
		s += fmt.Sprintf(" %s=%s", c.GetType(), c.GetStatus())
	}
	for _, cs := range append(p.GetStatus().GetInitContainerStatuses(), p.GetStatus().GetContainerStatuses()...) {
		st := cs.GetState()
		switch {
		case st.GetRunning() != nil:
			s += fmt.Sprintf(" %s:running(ready=%v,restarts=%d)", cs.GetName(), cs.GetReady(), cs.GetRestartCount())
		case st.GetTerminated() != nil:
			s += fmt.Sprintf(" %s:terminated(%d,%s,restarts=%d)", cs.GetName(), st.GetTerminated().GetExitCode(), st.GetTerminated().GetReason(), cs.GetRestartCount())
		case st.GetWaiting() != nil:
			s += fmt.Sprintf(" %s:waiting(%s,restarts=%d)", cs.GetName(), st.GetWaiting().GetReason(), cs.GetRestartCount())
		}
	}
	return s
}

// waitPod polls a pod until cond holds.
func waitPod(t testing.TB, pods *client.Client[*corev1.Pod], name string, d time.Duration, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var got *corev1.Pod
	eventually(t, d, name+" "+what, func() (bool, string) {
		p, err := pods.Get(context.Background(), "default", name)
		if err != nil {
			return false, err.Error()
		}
		got = p
		return cond(p), describe(p)
	})
	return got
}

func eventsClient(n *realNode) *client.Client[*corev1.Event] { return client.Events(n.api.Conn) }
