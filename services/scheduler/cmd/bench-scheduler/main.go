// Command bench-scheduler measures the scheduler. It starts a real
// apiserver on an embedded etcd in-process (apiservertest, run under
// testing.Benchmark so it needs no `go test`), creates 1,000 Node objects
// in 10 zones (a seventh of them tainted NoSchedule, another seventh PreferNoSchedule), runs the scheduler in-process with
// a NodeResourcesFit + TaintToleration + PodTopologySpread profile, creates
// 5,000 Pods with requests (50 apps of 100, each spread over zones with
// maxSkew 1), and reports
//
//   - end to end: pods/s from the first Pod created to the last one bound
//     (as a watch sees the binding), with create→bound latency percentiles;
//   - the scheduling cycle alone: the same nodes and pods on a scheduler
//     with no apiserver (snapshot, PreFilter, Filter, Score, assume), in pods/s.
//
// Random choices use a fixed seed.
//
//	go run ./services/scheduler/cmd/bench-scheduler [-nodes 1000] [-pods 5000]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"podline.dev/pkg/client"
	"podline.dev/pkg/watch"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/scheduler/internal/profile"
	"podline.dev/services/scheduler/internal/scheduler"
	st "podline.dev/services/scheduler/testing"
)

const benchProfile = `
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      multiPoint:
        disabled: [{name: "*"}]
        enabled:
          - {name: PrioritySort}
          - {name: NodeResourcesFit, weight: 1}
          - {name: TaintToleration, weight: 3}
          - {name: PodTopologySpread, weight: 2}
          - {name: DefaultBinder}
`

type params struct {
	nodes, pods, apps, zones int
	clients                  int
	timeout                  time.Duration
	seed                     uint64
	targetE2E, targetCycle   float64
	parallelism              int
}

func main() {
	var p params
	flag.IntVar(&p.nodes, "nodes", 1000, "Node objects")
	flag.IntVar(&p.pods, "pods", 5000, "Pods to schedule")
	flag.IntVar(&p.apps, "apps", 50, "apps (label app=bench-N), each spread over zones")
	flag.IntVar(&p.zones, "zones", 10, "zones the nodes are in")
	flag.IntVar(&p.clients, "clients", 64, "concurrent clients creating Pods")
	flag.DurationVar(&p.timeout, "timeout", 5*time.Minute, "give up after")
	flag.Uint64Var(&p.seed, "seed", 1, "seed of every random choice")
	flag.Float64Var(&p.targetE2E, "target-e2e", 300, "end-to-end pods/s target")
	flag.Float64Var(&p.targetCycle, "target-cycle", 2000, "scheduling-cycle pods/s target")
	flag.IntVar(&p.parallelism, "parallelism", 0, "goroutines for Filter and Score (0: GOMAXPROCS)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the cycle-only run to this file")
	only := flag.String("only", "", `run only "cycle" or "e2e"`)
	memProfile := flag.String("memprofile", "", "write an allocation profile after the cycle-only runs to this file")
	flag.Parse()

	cfg, err := profile.Parse([]byte(benchProfile))
	if err != nil {
		fail(err)
	}
	nodes, pods := workload(p)
	fmt.Printf("bench-scheduler: %d nodes in %d zones, %d pods in %d apps, GOMAXPROCS=%d, %s\n",
		p.nodes, p.zones, p.pods, p.apps, runtime.GOMAXPROCS(0), runtime.Version())
	fmt.Println("profile: PrioritySort, NodeResourcesFit(1, LeastAllocated), TaintToleration(3), PodTopologySpread(2), DefaultBinder")

	// The cycle alone first, on a quiet machine.
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
	}
	for _, prof := range cycleProfiles(*only, cfg) {
		load := loadAverage()
		rate, d, cpu, err := cycleOnly(prof.cfg, nodes, pods, p)
		if err != nil {
			fail(err)
		}
		if *cpuProfile != "" {
			pprof.StopCPUProfile()
			*cpuProfile = ""
		}
		mark := ""
		if prof.cfg == cfg {
			mark = verdict(rate, p.targetCycle)
		}
		fmt.Printf("scheduling cycle alone, %-30s %6.0f pods/s  (%d pods in %v, %.0f µs/pod)%s\n", prof.name+":", rate, len(pods), d.Round(time.Millisecond),
			float64(d.Microseconds())/float64(len(pods)), mark)
		fmt.Printf("    CPU time %v = %.0f µs/pod (%.0f pods per CPU-second); load average before: %s\n", cpu.Round(time.Millisecond),
			float64(cpu.Microseconds())/float64(len(pods)), float64(len(pods))/cpu.Seconds(), load)
	}

	if *memProfile != "" {
		f, err := os.Create(*memProfile)
		if err != nil {
			fail(err)
		}
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			fail(err)
		}
		f.Close()
	}
	if *only == "cycle" {
		return
	}
	var res e2eResult
	ranOne := false
	testing.Benchmark(func(b *testing.B) {
		if ranOne { // testing.Benchmark reruns short functions; one run is the benchmark
			return
		}
		ranOne = true
		res, err = endToEnd(b, p, cfg, nodes, pods)
	})
	if err != nil {
		fail(err)
	}
	res.print(p)
}

type namedProfile struct {
	name string
	cfg  *profile.Config
}

func cycleProfiles(only string, cfg *profile.Config) []namedProfile {
	if only == "e2e" {
		return nil
	}
	return []namedProfile{{"bench profile", cfg}, {"default profile (all plugins)", profile.Default()}}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench-scheduler:", err)
	os.Exit(1)
}

func verdict(got, target float64) string {
	if got >= target {
		return fmt.Sprintf("  [target ≥ %.0f: met]", target)
	}
	return fmt.Sprintf("  [target ≥ %.0f: MISSED]", target)
}

// workload builds the nodes and pods with a fixed seed.
func workload(p params) ([]*corev1.Node, []*corev1.Pod) {
	r := rand.New(rand.NewPCG(p.seed, p.seed+1))
	nodes := make([]*corev1.Node, p.nodes)
	for i := range nodes {
		w := st.MakeNode().Name(fmt.Sprintf("node-%04d", i)).Zone(fmt.Sprintf("zone-%d", i%p.zones)).
			Resources(map[string]string{"cpu": "32", "memory": "128Gi", "pods": "110"})
		switch {
		case i%7 == 6:
			w.Taint("dedicated", "infra", "NoSchedule")
		case i%7 == 5:
			w.Taint("spot", "true", "PreferNoSchedule")
		}
		nodes[i] = w.Obj()
	}
	cpus := []string{"100m", "200m", "250m", "500m"}
	mems := []string{"128Mi", "256Mi", "512Mi"}
	pods := make([]*corev1.Pod, p.pods)
	for i := range pods {
		app := fmt.Sprintf("bench-%d", i%p.apps)
		pods[i] = st.MakePod().Name(fmt.Sprintf("%s-%05d", app, i)).Label("app", app).Created(int64(1_700_000_000+i)).
			Req(cpus[r.IntN(len(cpus))], mems[r.IntN(len(mems))]).
			SpreadConstraint(1, "topology.kubernetes.io/zone", "DoNotSchedule", map[string]string{"app": app}).Obj()
	}
	return nodes, pods
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// cycleOnly runs the scheduling cycle for every pod on a scheduler with no apiserver.
// cpuTime is the CPU time (user + system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadAverage is the 1-minute load average, to say how busy the machine was.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

// cycleOnly runs the scheduling cycle for every pod on a scheduler with no
// apiserver; it returns pods/s, the wall time and the CPU time used.
func cycleOnly(cfg *profile.Config, nodes []*corev1.Node, pods []*corev1.Pod, p params) (float64, time.Duration, time.Duration, error) {
	ctx := context.Background()
	s, err := scheduler.New(ctx, nil, cfg, scheduler.WithoutEvents(), scheduler.WithSeed(p.seed), scheduler.WithLogger(quiet()),
		scheduler.WithParallelism(p.parallelism))
	if err != nil {
		return 0, 0, 0, err
	}
	for _, n := range nodes {
		s.Cache.AddNode(n)
	}
	runtime.GC()
	cpu0 := cpuTime()
	start := time.Now()
	for _, pod := range pods {
		if _, err := s.RunSchedulingCycle(ctx, pod); err != nil {
			return 0, 0, 0, fmt.Errorf("pod %s: %w", pod.GetMetadata().GetName(), err)
		}
	}
	d := time.Since(start)
	return float64(len(pods)) / d.Seconds(), d, cpuTime() - cpu0, nil
}

type e2eResult struct {
	pods                  int
	nodesCreated          time.Duration
	created, bound        time.Duration
	p50, p90, p99, maxLat time.Duration
	attemptsPerPod        float64
	unschedulableAttempts int64
	cpuStart, cpu         time.Duration
	load                  string
}

func (r e2eResult) print(p params) {
	rate := float64(r.pods) / r.bound.Seconds()
	fmt.Printf("end to end (apiserver + embedded etcd in-process): %d nodes created in %v\n", p.nodes, r.nodesCreated.Round(time.Millisecond))
	fmt.Printf("  %d pods created in %v (%.0f/s, %d clients)\n", r.pods, r.created.Round(time.Millisecond), float64(r.pods)/r.created.Seconds(), p.clients)
	fmt.Printf("  first create → last bind: %v  =  %.0f pods/s%s\n", r.bound.Round(time.Millisecond), rate, verdict(rate, p.targetE2E))
	fmt.Printf("  create→bound latency: p50 %v, p90 %v, p99 %v, max %v\n", r.p50.Round(time.Millisecond), r.p90.Round(time.Millisecond),
		r.p99.Round(time.Millisecond), r.maxLat.Round(time.Millisecond))
	fmt.Printf("  scheduling attempts per pod: %.3f (%d unschedulable attempts)\n", r.attemptsPerPod, r.unschedulableAttempts)
	fmt.Printf("  process CPU time (apiserver, etcd, scheduler, clients) %v = %.0f µs/pod; load average before: %s\n",
		r.cpu.Round(time.Millisecond), float64(r.cpu.Microseconds())/float64(r.pods), r.load)
}

func endToEnd(b *testing.B, p params, cfg *profile.Config, nodes []*corev1.Node, pods []*corev1.Pod) (e2eResult, error) {
	res := e2eResult{load: loadAverage()}
	srv := apiservertest.Start(b)
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	podClient, nodeClient := client.Pods(srv.Conn), client.Nodes(srv.Conn)

	start := time.Now()
	if err := parallel(ctx, len(nodes), 32, func(i int) error {
		_, err := nodeClient.Create(ctx, nodes[i])
		return err
	}); err != nil {
		return res, err
	}
	res.nodesCreated = time.Since(start)

	attempts := &countingLogger{}
	sched, err := scheduler.New(ctx, srv.Conn, cfg, scheduler.WithSeed(p.seed), scheduler.WithLogger(slog.New(attempts)), scheduler.WithHost("bench"),
		scheduler.WithParallelism(p.parallelism))
	if err != nil {
		return res, err
	}
	sctx, stop := context.WithCancel(ctx)
	sched.Start(sctx)
	if !sched.WaitForCacheSync(sctx) {
		stop()
		return res, fmt.Errorf("scheduler caches did not sync")
	}
	done := make(chan struct{})
	go func() { defer close(done); sched.Run(sctx) }()
	defer func() { stop(); <-done; sched.Shutdown() }()

	// Watch bindings from before the first create. A watch the apiserver
	// drops (a slow reader on a busy machine) is resumed from the last
	// resourceVersion seen, or after a relist when that is too old.
	createdAt := make([]atomic.Int64, len(pods))
	index := make(map[string]int, len(pods))
	for i, pod := range pods {
		index[pod.GetMetadata().GetName()] = i
	}
	boundCh := make(chan []time.Duration, 1)
	var first atomic.Int64
	go func() {
		lat := make([]time.Duration, 0, len(pods)+1)
		seen := make([]bool, len(pods))
		saw := func(pod *corev1.Pod) bool {
			i, ok := index[pod.GetMetadata().GetName()]
			if !ok || seen[i] || pod.GetSpec().GetNodeName() == "" {
				return false
			}
			seen[i] = true
			now := time.Now()
			lat = append(lat, now.Sub(time.Unix(0, createdAt[i].Load())))
			if len(lat) == len(pods) {
				lat = append(lat, now.Sub(time.Unix(0, first.Load()))) // the last element: first create → last bind
				return true
			}
			return false
		}
		rv := ""
		for ctx.Err() == nil {
			if rv == "" {
				list, lm, err := podClient.List(ctx, &metav1.ListRequest{Namespace: "default"})
				if err != nil {
					time.Sleep(100 * time.Millisecond)
					continue
				}
				for _, pod := range list {
					if saw(pod) {
						boundCh <- lat
						return
					}
				}
				rv = lm.GetResourceVersion()
			}
			w, err := podClient.Watch(ctx, &metav1.ListRequest{Namespace: "default", ResourceVersion: rv, AllowWatchBookmarks: true})
			if err != nil {
				rv = ""
				continue
			}
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					rv = "" // too old: relist
					break
				}
				rv = ev.Object.GetMetadata().GetResourceVersion()
				if pod, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Modified && saw(pod) {
					w.Stop()
					boundCh <- lat
					return
				}
			}
			w.Stop()
		}
		boundCh <- nil
	}()
	// Let the first list and watch start before the first create.
	time.Sleep(200 * time.Millisecond)

	res.cpuStart = cpuTime()
	t0 := time.Now()
	first.Store(t0.UnixNano())
	if err := parallel(ctx, len(pods), p.clients, func(i int) error {
		pod := podClone(pods[i])
		createdAt[i].Store(time.Now().UnixNano())
		_, err := podClient.Create(ctx, pod)
		return err
	}); err != nil {
		return res, err
	}
	res.created = time.Since(t0)
	cpu0 := res.cpuStart
	var lat []time.Duration
	select {
	case lat = <-boundCh:
	case <-ctx.Done():
		return res, fmt.Errorf("not every pod was bound within %v", p.timeout)
	}
	if lat == nil {
		return res, fmt.Errorf("not every pod was bound within %v", p.timeout)
	}
	res.pods = len(pods)
	res.cpu = cpuTime() - cpu0
	res.bound = lat[len(lat)-1]
	lat = lat[:len(lat)-1]
	slices.Sort(lat)
	pct := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
	res.p50, res.p90, res.p99, res.maxLat = pct(0.5), pct(0.9), pct(0.99), lat[len(lat)-1]
	res.unschedulableAttempts = attempts.unschedulable.Load()
	res.attemptsPerPod = float64(int64(len(pods))+res.unschedulableAttempts) / float64(len(pods))
	return res, nil
}

func podClone(p *corev1.Pod) *corev1.Pod {
	c := &corev1.Pod{Metadata: &metav1.ObjectMeta{Namespace: p.Metadata.Namespace, Name: p.Metadata.Name, Labels: p.Metadata.Labels}, Spec: p.Spec}
	return c
}

// parallel runs f(0..n-1) on k goroutines and returns the first error.
func parallel(ctx context.Context, n, k int, f func(i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for range k {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return firstErr
}

// countingLogger counts the scheduler's "no fit" log lines and drops the rest.
type countingLogger struct {
	unschedulable atomic.Int64
}

func (c *countingLogger) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (c *countingLogger) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "unable to schedule pod; no fit; waiting" {
		c.unschedulable.Add(1)
	}
	return nil
}
func (c *countingLogger) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *countingLogger) WithGroup(string) slog.Handler      { return c }
