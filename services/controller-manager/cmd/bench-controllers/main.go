// Command bench-controllers measures the controller-manager end to end: it
// starts a real apiserver on an embedded etcd in-process (apiservertest,
// run under testing.Benchmark so it needs no `go test`), runs every
// controller in-process, creates N Deployments of R replicas at once (pods
// need no nodes), and reports how long it took until all N×R Pods existed,
// and how many writes the controller-manager made per Pod, by call.
//
//	go run ./services/controller-manager/cmd/bench-controllers [-deployments 100] [-replicas 10]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/client"
	"podline.dev/pkg/watch"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/controller-manager/internal/app"
)

func main() {
	var (
		deployments = flag.Int("deployments", 100, "Deployments to create")
		replicas    = flag.Int("replicas", 10, "replicas of each")
		clients     = flag.Int("clients", 16, "concurrent clients creating the Deployments")
		timeout     = flag.Duration("timeout", 120*time.Second, "give up after")
		target      = flag.Duration("target", 10*time.Second, "time all Pods should exist within")
		settle      = flag.Duration("settle", 2*time.Second, "quiet time after which the controllers are at rest")
		workers     = flag.String("workers", "", "worker counts per controller, e.g. replicaset=20,deployment=10 (default: Kubernetes' --concurrent-* defaults)")
	)
	flag.Parse()
	w, err := parseWorkers(*workers)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-controllers:", err)
		os.Exit(2)
	}
	var (
		res    result
		ranOne bool
	)
	testing.Benchmark(func(b *testing.B) {
		if ranOne { // testing.Benchmark reruns short functions; one run is the benchmark
			return
		}
		ranOne = true
		res, err = run(b, *deployments, int32(*replicas), *clients, *timeout, *settle, w)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-controllers:", err)
		os.Exit(1)
	}
	res.print(os.Stdout, *target)
}

type result struct {
	deployments, replicas int
	pods                  int
	created               time.Duration // all Deployments created
	firstPod, allPods     time.Duration
	available             time.Duration // every Deployment's status shows all replicas
	writesAtPods          map[string]int
	writesAtRest          map[string]int
	restAfter             time.Duration
}

// countingConn counts the controller-manager's calls by method.
type countingConn struct {
	grpc.ClientConnInterface
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	c.mu.Lock()
	c.calls[method]++
	c.mu.Unlock()
	return c.ClientConnInterface.Invoke(ctx, method, args, reply, opts...)
}

// writes returns the write calls so far, keyed "resource.Method".
func (c *countingConn) writes() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for m, n := range c.calls {
		parts := strings.Split(strings.TrimPrefix(m, "/"), "/")
		if len(parts) != 2 {
			continue
		}
		switch parts[1] {
		case "Create", "Update", "UpdateStatus", "Delete", "Bind":
			svc := parts[0][strings.LastIndex(parts[0], ".")+1:]
			out[svc+"."+parts[1]] += n
		}
	}
	return out
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func run(b *testing.B, nDeploy int, replicas int32, clients int, timeout, settle time.Duration, workers map[string]int) (result, error) {
	res := result{deployments: nDeploy, replicas: int(replicas), pods: nDeploy * int(replicas)}
	s := apiservertest.Start(b)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	cmConn, err := app.Dial(s.Addr)
	if err != nil {
		return res, err
	}
	defer cmConn.Close()
	counting := &countingConn{ClientConnInterface: cmConn, calls: map[string]int{}}
	started := make(chan struct{})
	cmCtx, stopCM := context.WithCancel(ctx)
	cmDone := make(chan error, 1)
	go func() {
		cmDone <- app.Run(cmCtx, app.Config{
			Conn:             counting,
			Workers:          workers,
			Log:              slog.New(slog.NewTextHandler(io.Discard, nil)),
			OnStartedLeading: func() { close(started) },
		})
	}()
	defer func() { stopCM(); <-cmDone }()
	select {
	case <-started:
	case <-ctx.Done():
		return res, fmt.Errorf("controller-manager did not start")
	}

	// Count pods from a watch, as a client would see them appear.
	pods := client.Pods(s.Conn)
	_, lm, err := pods.List(ctx, &metav1.ListRequest{Namespace: "default"})
	if err != nil {
		return res, err
	}
	w, err := pods.Watch(ctx, &metav1.ListRequest{Namespace: "default", ResourceVersion: lm.GetResourceVersion()})
	if err != nil {
		return res, err
	}
	defer w.Stop()

	start := time.Now()
	var firstPod atomic.Int64
	allPods := make(chan time.Duration, 1)
	go func() {
		seen := map[string]bool{}
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added {
				continue
			}
			seen[ev.Object.GetMetadata().GetName()] = true
			if len(seen) == 1 {
				firstPod.Store(int64(time.Since(start)))
			}
			if len(seen) == res.pods {
				allPods <- time.Since(start)
				return
			}
		}
	}()

	deploys := client.Deployments(s.Conn)
	next := make(chan int)
	var wg sync.WaitGroup
	var createErr atomic.Value
	for range clients {
		wg.Go(func() {
			for i := range next {
				if _, err := deploys.Create(ctx, deploymentOf(i, replicas)); err != nil {
					createErr.Store(err)
				}
			}
		})
	}
	for i := range nDeploy {
		next <- i
	}
	close(next)
	wg.Wait()
	res.created = time.Since(start)
	if err, _ := createErr.Load().(error); err != nil {
		return res, fmt.Errorf("create: %w", err)
	}

	select {
	case d := <-allPods:
		res.allPods = d
	case <-ctx.Done():
		return res, fmt.Errorf("not all %d pods appeared within %v", res.pods, timeout)
	}
	res.firstPod = time.Duration(firstPod.Load())
	res.writesAtPods = counting.writes()

	// Then wait for the Deployments to report every replica, and for the
	// controllers to go quiet.
	for {
		list, _, err := deploys.List(ctx, &metav1.ListRequest{Namespace: "default"})
		if err != nil {
			return res, err
		}
		ok := 0
		for _, d := range list {
			if d.GetStatus().GetReplicas() == replicas && d.GetStatus().GetObservedGeneration() == d.GetMetadata().GetGeneration() {
				ok++
			}
		}
		if ok == nDeploy {
			res.available = time.Since(start)
			break
		}
		select {
		case <-ctx.Done():
			return res, fmt.Errorf("deployment status: %d of %d complete", ok, nDeploy)
		case <-time.After(100 * time.Millisecond):
		}
	}
	last, lastChange := total(counting.writes()), time.Now()
	for time.Since(lastChange) < settle {
		select {
		case <-ctx.Done():
			return res, fmt.Errorf("the controllers did not come to rest")
		case <-time.After(100 * time.Millisecond):
		}
		if n := total(counting.writes()); n != last {
			last, lastChange = n, time.Now()
		}
	}
	res.writesAtRest = counting.writes()
	res.restAfter = lastChange.Sub(start)
	return res, nil
}

// parseWorkers reads "name=n,name=n".
func parseWorkers(s string) (map[string]int, error) {
	out := map[string]int{}
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		name, n, ok := strings.Cut(part, "=")
		v, err := strconv.Atoi(n)
		if !ok || err != nil || app.Registry[name] == nil {
			return nil, fmt.Errorf("bad -workers entry %q", part)
		}
		out[name] = v
	}
	return out, nil
}

func deploymentOf(i int, replicas int32) *appsv1.Deployment {
	name := fmt.Sprintf("bench-%03d", i)
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		Metadata: &metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: &appsv1.DeploymentSpec{
			Replicas: proto.Int32(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: &corev1.PodTemplateSpec{
				Metadata: &metav1.ObjectMeta{Labels: labels},
				Spec:     &corev1.PodSpec{Containers: []*corev1.Container{{Name: "web", Image: "registry.podline:5000/demo/web:1.0"}}},
			},
		},
	}
}

func (r result) print(out io.Writer, target time.Duration) {
	verdict := "PASS"
	if r.allPods > target {
		verdict = "FAIL"
	}
	p := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	p("bench-controllers: %d Deployments x %d replicas, in-process apiserver on embedded etcd, GOMAXPROCS=%d",
		r.deployments, r.replicas, runtime.GOMAXPROCS(0))
	p("  all %d Deployments created after   %8.2f s", r.deployments, r.created.Seconds())
	p("  first Pod after                    %8.2f s", r.firstPod.Seconds())
	p("  all %d Pods exist after          %8.2f s   (target %v: %s)", r.pods, r.allPods.Seconds(), target, verdict)
	p("  Pods per second                    %8.0f", float64(r.pods)/r.allPods.Seconds())
	p("  all Deployments report replicas   %8.2f s", r.available.Seconds())
	p("  controller-manager writes until all Pods exist: %d (%.2f per Pod)", total(r.writesAtPods), float64(total(r.writesAtPods))/float64(r.pods))
	p("  controller-manager writes at rest (quiet from %.2f s): %d (%.2f per Pod)", r.restAfter.Seconds(), total(r.writesAtRest), float64(total(r.writesAtRest))/float64(r.pods))
	keys := make([]string, 0, len(r.writesAtRest))
	for k := range r.writesAtRest {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p("    %-28s %6d  (%.2f per Pod)", k, r.writesAtRest[k], float64(r.writesAtRest[k])/float64(r.pods))
	}
}
