package test

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc"

	"podline.dev/pkg/client"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/scheduler/internal/profile"
	"podline.dev/services/scheduler/internal/scheduler"
)

type env struct {
	// schedConn, when set, is the scheduler's connection instead of s.Conn.
	schedConn *grpc.ClientConn
	t         *testing.T
	s         *apiservertest.Server
	ctx       context.Context
	sched     *scheduler.Scheduler
	pods      *client.Client[*corev1.Pod]
	nodes     *client.Client[*corev1.Node]
}

func quietLogger() *slog.Logger {
	if os.Getenv("SCHEDULER_TEST_LOGS") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// start runs an apiserver and, unless noScheduler, a scheduler with the default profile.
func start(t *testing.T, opts ...scheduler.Option) *env {
	t.Helper()
	e := newEnv(t)
	e.sched = e.runScheduler(profile.Default(), opts...)
	return e
}

func newEnv(t *testing.T) *env {
	t.Helper()
	s := apiservertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return &env{t: t, s: s, ctx: ctx, pods: client.Pods(s.Conn), nodes: client.Nodes(s.Conn)}
}

func (e *env) runScheduler(cfg *profile.Config, opts ...scheduler.Option) *scheduler.Scheduler {
	e.t.Helper()
	opts = append([]scheduler.Option{scheduler.WithLogger(quietLogger()), scheduler.WithHost("test-host")}, opts...)
	conn := e.s.Conn
	if e.schedConn != nil {
		conn = e.schedConn
	}
	sched, err := scheduler.New(e.ctx, conn, cfg, opts...)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	sched.Start(ctx)
	if !sched.WaitForCacheSync(ctx) {
		e.t.Fatal("caches did not sync")
	}
	done := make(chan struct{})
	go func() { defer close(done); sched.Run(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		<-done
		sched.Shutdown()
	})
	return sched
}

func (e *env) createNode(n *corev1.Node) *corev1.Node {
	e.t.Helper()
	out, err := e.nodes.Create(e.ctx, n)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) createPod(p *corev1.Pod) *corev1.Pod {
	e.t.Helper()
	p.Metadata.Uid = ""
	out, err := e.pods.Create(e.ctx, p)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) getPod(name string) *corev1.Pod {
	e.t.Helper()
	p, err := e.pods.Get(e.ctx, "default", name)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// eventually polls cond every 20ms until it holds or d passes.
func (e *env) eventually(d time.Duration, what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *env) waitBound(name string, d time.Duration) string {
	e.t.Helper()
	var node string
	e.eventually(d, "pod "+name+" to be bound", func() bool {
		node = e.getPod(name).GetSpec().GetNodeName()
		return node != ""
	})
	return node
}

func (e *env) events(reason string) []*corev1.Event {
	e.t.Helper()
	evs, _, err := client.Events(e.s.Conn).List(e.ctx, &metav1.ListRequest{Namespace: "default", FieldSelector: "reason=" + reason})
	if err != nil {
		e.t.Fatal(err)
	}
	return evs
}

func (e *env) eventFor(reason, pod string) *corev1.Event {
	for _, ev := range e.events(reason) {
		if ev.GetInvolvedObject().GetName() == pod {
			return ev
		}
	}
	return nil
}

func condition(p *corev1.Pod, typ string) *corev1.PodCondition {
	for _, c := range p.GetStatus().GetConditions() {
		if c.GetType() == typ {
			return c
		}
	}
	return nil
}
