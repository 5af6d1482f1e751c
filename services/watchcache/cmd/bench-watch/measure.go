package main

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"podline.dev/pkg/client"
	"podline.dev/pkg/watch"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

const sentAnnotation = "bench.podline.dev/sent"

type result struct {
	delivered, expected int64
	p50, p99            time.Duration
	apiCPU, replicaCPU  time.Duration
	window              time.Duration
	etcdWatchers        float64
	memPerWatcher       float64 // bytes
}

// measure opens n watchers over conns, writes at cfg.rate for cfg.seconds
// and collects every write-to-event delay.
func measure(ctx context.Context, cfg config, c *cluster, writer *client.Client[*corev1.Pod], conns []*grpc.ClientConn, servers []*proc, n int, prefix string) (result, error) {
	var r result
	_, lm, err := writer.List(ctx, &metav1.ListRequest{Limit: 1})
	if err != nil {
		return r, err
	}
	runtime.GC()
	rssBefore := sumRSS(servers)

	wctx, stopWatchers := context.WithCancel(ctx)
	defer stopWatchers()
	var received atomic.Int64
	delays := make([][]time.Duration, n)
	var wg, opened sync.WaitGroup
	sem := make(chan struct{}, 64)
	var openErr atomic.Value
	for i := range n {
		opened.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			w, err := client.Pods(conns[i%len(conns)]).Watch(wctx, &metav1.ListRequest{
				ResourceVersion: lm.GetResourceVersion(), FieldSelector: "spec.nodeName=" + node(i, cfg.nodes)})
			opened.Done()
			if err != nil {
				openErr.Store(err)
				return
			}
			wg.Go(func() {
				defer w.Stop()
				for ev := range w.ResultChan() {
					if ev.Type != watch.Added || !strings.HasPrefix(ev.Object.GetMetadata().GetName(), prefix+"-") {
						continue
					}
					sent, _ := strconv.ParseInt(ev.Object.GetMetadata().GetAnnotations()[sentAnnotation], 10, 64)
					delays[i] = append(delays[i], time.Duration(time.Now().UnixNano()-sent))
					received.Add(1)
				}
			})
		}()
	}
	opened.Wait()
	if err, _ := openErr.Load().(error); err != nil {
		return r, fmt.Errorf("open watch: %w", err)
	}
	time.Sleep(time.Second) // let the servers settle before measuring memory
	r.memPerWatcher = float64(sumRSS(servers)-rssBefore) / float64(n)
	r.etcdWatchers = metric(c.etcdURL+"/metrics", "etcd_debugging_mvcc_watcher_total")

	perNode := make([]int64, cfg.nodes)
	for i := range n {
		perNode[i%cfg.nodes]++
	}
	total := cfg.rate * cfg.seconds
	for i := range total {
		r.expected += perNode[i%cfg.nodes]
	}
	apiCPU0, repCPU0 := c.api.cpu(), sumCPU(c.replicas)
	start := time.Now()
	if err := write(ctx, writer, cfg, prefix, total); err != nil {
		return r, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for received.Load() < r.expected && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	r.window = time.Since(start)
	r.apiCPU, r.replicaCPU = c.api.cpu()-apiCPU0, sumCPU(c.replicas)-repCPU0
	stopWatchers()
	wg.Wait()
	r.delivered = received.Load()
	var all []time.Duration
	for _, d := range delays {
		all = append(all, d...)
	}
	slices.Sort(all)
	if len(all) > 0 {
		r.p50, r.p99 = all[len(all)/2], all[len(all)*99/100]
	}
	return r, nil
}

func node(i, nodes int) string { return "node-" + strconv.Itoa(i%nodes) }

// write creates total pods at cfg.rate, each stamped with its send time.
func write(ctx context.Context, pods *client.Client[*corev1.Pod], cfg config, prefix string, total int) error {
	tick := time.NewTicker(time.Second / time.Duration(cfg.rate))
	defer tick.Stop()
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	var failed atomic.Value
	for i := range total {
		<-tick.C
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			p := &corev1.Pod{
				Metadata: &metav1.ObjectMeta{Name: fmt.Sprintf("%s-%05d", prefix, i), Namespace: "default",
					Annotations: map[string]string{sentAnnotation: strconv.FormatInt(time.Now().UnixNano(), 10)}},
				Spec: &corev1.PodSpec{NodeName: node(i, cfg.nodes), Containers: []*corev1.Container{{Name: "c", Image: "registry.podline:5000/demo/web:1.0"}}},
			}
			if _, err := pods.Create(ctx, p); err != nil {
				failed.Store(err)
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	return nil
}

func sumRSS(ps []*proc) int64 {
	var t int64
	for _, p := range ps {
		t += p.rss()
	}
	return t
}

func sumCPU(ps []*proc) time.Duration {
	var t time.Duration
	for _, p := range ps {
		t += p.cpu()
	}
	return t
}
