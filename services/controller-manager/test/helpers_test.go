package test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/controller-manager/internal/app"
	"podline.dev/services/controller-manager/internal/controller"
)

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testOptions are short timers for tests.
func testOptions() controller.Options {
	o := controller.DefaultOptions()
	o.NodeMonitorPeriod = 100 * time.Millisecond
	o.NodeMonitorGracePeriod = time.Second
	o.NodeStartupGracePeriod = time.Second
	o.NamespaceRetryPeriod = 200 * time.Millisecond
	return o
}

// manager is a controller-manager running in-process.
type manager struct {
	cancel context.CancelFunc
	done   chan error
	conn   *countingConn
}

// stop kills the instance (its Lease is not released, as in a crash) and waits for it.
func (m *manager) stop(t *testing.T) {
	m.cancel()
	select {
	case <-m.done:
	case <-time.After(10 * time.Second):
		t.Error("controller-manager did not stop")
	}
}

// startManager runs a controller-manager against s until the test ends.
func startManager(t *testing.T, s *apiservertest.Server, mutate func(*app.Config)) *manager {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cc, err := app.Dial(s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	conn := &countingConn{ClientConnInterface: cc}
	cfg := app.Config{Conn: conn, Options: testOptions(), Log: quietLog()}
	if mutate != nil {
		mutate(&cfg)
	}
	m := &manager{cancel: cancel, done: make(chan error, 1), conn: conn}
	go func() { m.done <- app.Run(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-m.done:
		case <-time.After(10 * time.Second):
		}
	})
	return m
}

// countingConn counts the calls an instance makes, by method.
type countingConn struct {
	grpc.ClientConnInterface
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	c.mu.Lock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[method]++
	c.mu.Unlock()
	return c.ClientConnInterface.Invoke(ctx, method, args, reply, opts...)
}

// writes counts create/update/delete calls, except on Leases and Events.
func (c *countingConn) writes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for m, k := range c.calls {
		if strings.Contains(m, ".Leases/") || strings.Contains(m, ".Events/") {
			continue
		}
		for _, verb := range []string{"/Create", "/Update", "/UpdateStatus", "/Delete"} {
			if strings.HasSuffix(m, verb) {
				n += k
			}
		}
	}
	return n
}

// eventually polls cond every 50 ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: not within %v; last state: %s", what, timeout, last)
}

func deploymentOf(name string, replicas int32, image string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		Metadata: &metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: &appsv1.DeploymentSpec{
			Replicas: proto.Int32(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: &corev1.PodTemplateSpec{
				Metadata: &metav1.ObjectMeta{Labels: labels},
				Spec:     &corev1.PodSpec{Containers: []*corev1.Container{{Name: "web", Image: image}}},
			},
		},
	}
}

// updateDeployment changes a deployment, retrying on conflicts with the
// controller's status writes as kubectl does.
func updateDeployment(ctx context.Context, t *testing.T, s *apiservertest.Server, name string, change func(*appsv1.Deployment)) {
	t.Helper()
	for range 10 {
		cur, err := client.Deployments(s.Conn).Get(ctx, "default", name)
		if err != nil {
			t.Fatal(err)
		}
		change(cur)
		_, err = client.Deployments(s.Conn).Update(ctx, cur)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
	t.Fatal("update kept conflicting")
}

func listRS(ctx context.Context, t *testing.T, s *apiservertest.Server, ns string) []*appsv1.ReplicaSet {
	t.Helper()
	rss, _, err := client.ReplicaSets(s.Conn).List(ctx, &metav1.ListRequest{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	return rss
}

func listPods(ctx context.Context, t *testing.T, s *apiservertest.Server, ns, selector string) []*corev1.Pod {
	t.Helper()
	pods, _, err := client.Pods(s.Conn).List(ctx, &metav1.ListRequest{Namespace: ns, LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	return pods
}

// kubelet plays the kubelets for a test: every pod that is not Ready is
// made Running and Ready with an IP, through UpdateStatus, until ctx ends.
func kubelet(ctx context.Context, s *apiservertest.Server) {
	pods := client.Pods(s.Conn)
	var ip atomic.Int32
	go func() {
		for ctx.Err() == nil {
			list, _, err := pods.List(ctx, &metav1.ListRequest{})
			if err == nil {
				for _, p := range list {
					if controller.IsPodReady(p) || p.GetMetadata().GetDeletionTimestamp() != nil {
						continue
					}
					n := ip.Add(1)
					p.Status = &corev1.PodStatus{
						Phase: "Running",
						PodIp: fmt.Sprintf("10.244.%d.%d", n/250, n%250+2),
						Conditions: []*corev1.PodCondition{{Type: "Ready", Status: "True",
							LastTransitionTime: &metav1.Time{Seconds: time.Now().Unix()}}},
					}
					if _, err := pods.UpdateStatus(ctx, p); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
						continue
					}
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
}

func readyPods(pods []*corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if controller.IsPodReady(p) && p.GetMetadata().GetDeletionTimestamp() == nil {
			n++
		}
	}
	return n
}
