package test

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/watch"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// benchPods is how many pods each round starts.
const benchPods = 30

// BenchmarkKubeletPodStartup measures, on a real containerd with the image
// present, the time from creating a pod bound to the node to seeing it
// Running through a watch: 30 pods one after another, and 30 at once;
// and the kubelet's resident memory with 30 pods running. It also reports
// the CPU time the whole machine spent in the rounds (kubelet, containerd,
// shims, runc, CNI plugins, the test's apiserver), per pod, and that time
// divided by the cores: no pod of a round can be Running before the round
// has had that much of the machine, whatever the kubelet does.
//
//	make bench-kubelet
func BenchmarkKubeletPodStartup(b *testing.B) {
	// The kubelet's own defaults for its periodic work, not the tests' short ones.
	n := startRealNode(b, "-v", "info", "--relist-period", "1s", "--sync-frequency", "10s", "--node-status-update-frequency", "10s")
	for _, mode := range []string{"sequential", "parallel"} {
		b.Run(mode, func(b *testing.B) {
			var all []time.Duration
			var rss int64
			var busy time.Duration
			for i := range b.N {
				lat, r, cpu := n.startupRound(b, fmt.Sprintf("%s-%d", mode[:3], i), mode == "parallel")
				all = append(all, lat...)
				rss = max(rss, r)
				busy += cpu
			}
			slices.Sort(all)
			b.ReportMetric(ms(percentile(all, 50)), "p50-ms")
			b.ReportMetric(ms(percentile(all, 99)), "p99-ms")
			b.ReportMetric(ms(all[len(all)-1]), "max-ms")
			b.ReportMetric(float64(rss)/(1<<20), "kubelet-rss-MiB")
			b.ReportMetric(ms(busy)/float64(len(all)), "machine-cpu-ms/pod")
			b.ReportMetric(ms(busy)/float64(b.N)/float64(runtime.NumCPU()), "round-cpu-floor-ms")
			b.ReportMetric(0, "ns/op") // a round's wall time says nothing here
		})
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}

// startupRound creates benchPods pods, measures each one's time to
// Running and the machine's CPU time until the last, reads the kubelet's
// RSS with all of them running, and deletes them again.
func (n *realNode) startupRound(b *testing.B, prefix string, parallel bool) ([]time.Duration, int64, time.Duration) {
	ctx := ctxFor(b, 5*time.Minute)
	w, err := n.pods.Watch(ctx, &metav1.ListRequest{Namespace: "default"})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	var mu sync.Mutex
	created := map[string]time.Time{}
	running := map[string]time.Duration{}
	seen := make(chan string, benchPods)
	go func() {
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				return
			}
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || p.GetStatus().GetPhase() != "Running" {
				continue
			}
			now := time.Now()
			mu.Lock()
			name := p.GetMetadata().GetName()
			if t0, ok := created[name]; ok {
				if _, done := running[name]; !done {
					running[name] = now.Sub(t0)
					seen <- name
				}
			}
			mu.Unlock()
		}
	}()
	create := func(i int) {
		name := fmt.Sprintf("%s-%02d", prefix, i)
		pod := makePod(name).node(n.name).container("web", webImage).port(8080).obj()
		mu.Lock()
		created[name] = time.Now()
		mu.Unlock()
		if _, err := n.pods.Create(ctx, pod); err != nil {
			b.Error(err)
		}
	}
	b.ResetTimer()
	busyBefore := machineBusy(b)
	if parallel {
		var wg sync.WaitGroup
		for i := range benchPods {
			wg.Go(func() { create(i) })
		}
		wg.Wait()
		for range benchPods {
			waitSeen(b, seen)
		}
	} else {
		for i := range benchPods {
			create(i)
			waitSeen(b, seen)
		}
	}
	b.StopTimer()
	cpu := machineBusy(b) - busyBefore
	rss := n.kubeletRSS()

	mu.Lock()
	lat := make([]time.Duration, 0, len(running))
	for _, d := range running {
		lat = append(lat, d)
	}
	mu.Unlock()
	// Delete them all and wait until they are gone.
	for name := range created {
		if _, err := n.pods.Delete(ctx, "default", name, nil); err != nil && !apierrors.IsNotFound(err) {
			b.Fatal(err)
		}
	}
	eventually(b, 2*time.Minute, "pods deleted", func() (bool, string) {
		pods, _, err := n.pods.List(ctx, &metav1.ListRequest{Namespace: "default"})
		return err == nil && len(pods) == 0, fmt.Sprintf("%d left", len(pods))
	})
	return lat, rss, cpu
}

// clockTicks is USER_HZ, the unit of /proc/stat on Linux.
const clockTicks = 100

// machineBusy is the CPU time all cores have spent not idle since boot
// (/proc/stat: user, nice, system, irq, softirq, steal).
func machineBusy(b *testing.B) time.Duration {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		b.Fatal(err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		b.Fatalf("/proc/stat: %q", line)
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		ticks += v
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

func waitSeen(b *testing.B, seen <-chan string) {
	select {
	case <-seen:
	case <-time.After(2 * time.Minute):
		b.Fatal("a pod did not reach Running within 2 minutes")
	}
}

// kubeletRSS is the kubelet process's resident set in bytes.
func (n *realNode) kubeletRSS() int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", n.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
