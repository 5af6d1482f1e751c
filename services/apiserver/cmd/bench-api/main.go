// Command bench-api measures the apiserver against the etcd it stands on,
// in one run on one machine, and prints the figures:
//
//  1. the apiserver's memory holding many pods in its watch cache, first,
//     while nothing else has been through it;
//  2. create throughput through the apiserver (gRPC) against raw etcd
//     create transactions, at the same concurrency and value size, and
//     with the full request chain (TLS, authentication, authorization)
//     against without it;
//  3. write-to-event delay for many watchers while writes go in at a fixed
//     rate, the watchers each on a connection of its own, as separate
//     clients are.
//
// etcd runs as a separate process (bin/etcd) so the memory figures are the
// apiserver's and its clients', not etcd's. Request loops are bounded in
// count and time, and traffic stays on loopback.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"podline.dev/pkg/client"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/server"
	"podline.dev/services/apiserver/internal/storage"
)

func main() {
	var (
		etcdBin     = flag.String("etcd", "bin/etcd", "etcd binary")
		creates     = flag.Int("creates", 3000, "creates per throughput run")
		concurrency = flag.Int("concurrency", 16, "concurrent writers")
		watchers    = flag.Int("watchers", 1000, "watchers for the delay run")
		watchConns  = flag.Int("watch-conns", 0, "connections the watchers share, round robin (0: one each, as separate clients have)")
		rate        = flag.Int("rate", 200, "writes per second in the delay run")
		seconds     = flag.Int("seconds", 10, "length of the delay run")
		cachePods   = flag.Int("cache-pods", 10000, "pods held in the watch cache for the memory run")
		phaseList   = flag.String("phases", "tput,chain,watch,mem", "which runs to make: tput (apiserver vs etcd), chain (request chain cost), watch (delay), mem (watch-cache memory)")
		cpuProfile  = flag.String("cpuprofile", "", "write a CPU profile of the whole process (apiserver and clients) to this file")
	)
	flag.Parse()
	phases = map[string]bool{}
	for _, p := range strings.Split(*phaseList, ",") {
		phases[strings.TrimSpace(p)] = true
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench-api:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench-api:", err)
			os.Exit(1)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err := run(*etcdBin, *creates, *concurrency, *watchers, *watchConns, *rate, *seconds, *cachePods); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "bench-api:", err)
		os.Exit(1)
	}
}

// phases are the runs -phases selected.
var phases map[string]bool

func run(etcdBin string, creates, concurrency, watchers, watchConns, rate, seconds, cachePods int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	etcd, stop, err := startEtcd(ctx, etcdBin)
	if err != nil {
		return err
	}
	defer stop()
	s, err := server.New(ctx, server.Config{Etcd: etcd, EtcdTimeout: 10 * time.Second})
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = s.ServeGRPC(ctx, lis) }()
	if err := s.Run(ctx); err != nil {
		return err
	}
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	pods := client.Pods(conn)
	// The ServiceAccount admission refuses pods whose namespace lacks its
	// "default" account, which the controller-manager would make.
	for _, ns := range []string{"default", "kube-public"} {
		sa := &corev1.ServiceAccount{Metadata: &metav1.ObjectMeta{Name: "default", Namespace: ns}}
		if _, err := client.ServiceAccounts(conn).Create(ctx, sa); err != nil {
			return err
		}
	}

	fmt.Printf("podline bench-api  (GOMAXPROCS=%d, %s)\n\n", runtime.GOMAXPROCS(0), time.Now().UTC().Format(time.RFC3339))

	// Memory first, on the fresh apiserver: what the later runs leave
	// behind (their pods, a thousand closed connections) is not the cache's.
	if phases["mem"] {
		if err := memory(ctx, pods, cachePods, concurrency); err != nil {
			return err
		}
	}
	if phases["tput"] {
		if err := throughput(ctx, etcd, pods, creates, concurrency); err != nil {
			return err
		}
	}
	if phases["chain"] {
		if err := chainRun(ctx, etcd, conn, creates, concurrency); err != nil {
			return err
		}
	}
	if phases["watch"] {
		if watchConns <= 0 || watchConns > watchers {
			watchConns = watchers
		}
		fmt.Printf("watch delay, %d watchers on %d connections, %d writes/s for %ds\n", watchers, watchConns, rate, seconds)
		for _, decode := range []bool{false, true} {
			d, err := watchDelay(ctx, conn, lis.Addr().String(), watchers, watchConns, rate, seconds, decode)
			if err != nil {
				return err
			}
			fmt.Println(d)
		}
		fmt.Println()
	}
	return nil
}

// throughput compares creates through the apiserver with raw etcd create
// transactions of the same value size at the same concurrency.
func throughput(ctx context.Context, etcd *clientv3.Client, pods *client.Client[*corev1.Pod], creates, concurrency int) error {
	sample := benchPod("sample-00000", "tput")
	val, _ := storage.Codec{APIVersion: "v1", Kind: "Pod"}.Encode(sample)
	rawRate := parallel(creates, concurrency, func(i int) error {
		key := fmt.Sprintf("/bench/raw/%08d", i)
		_, err := etcd.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).Then(clientv3.OpPut(key, string(val))).Commit()
		return err
	})
	apiRate := parallel(creates, concurrency, func(i int) error {
		_, err := pods.Create(ctx, benchPod(fmt.Sprintf("tput-%06d", i), "tput"))
		return err
	})
	fmt.Printf("create throughput, %d creates, %d concurrent, value %d bytes\n", creates, concurrency, len(val))
	fmt.Printf("  raw etcd txn      %8.0f /s\n", rawRate)
	fmt.Printf("  apiserver (gRPC)  %8.0f /s\n", apiRate)
	fmt.Printf("  ratio             %8.2f   (target >= 0.5)\n\n", apiRate/rawRate)
	return nil
}

// memory measures the apiserver's memory with cachePods more pods in its watch cache.
func memory(ctx context.Context, pods *client.Client[*corev1.Pod], cachePods, concurrency int) error {
	runtime.GC()
	before := heapInUse()
	parallel(cachePods, concurrency*4, func(i int) error {
		_, err := pods.Create(ctx, benchPod(fmt.Sprintf("mem-%06d", i), "mem"))
		return err
	})
	if err := waitCached(ctx, pods, "app=mem", cachePods); err != nil {
		return err
	}
	runtime.GC()
	after := heapInUse()
	fmt.Printf("memory with %d pods in the watch cache\n", cachePods)
	fmt.Printf("  process RSS %d MB (apiserver and the bench's clients; etcd runs apart)  (target < 300 MB)\n", rssMB())
	fmt.Printf("  Go heap in use %d MB -> %d MB\n\n", before>>20, after>>20)
	return nil
}

func benchPod(name, app string) *corev1.Pod {
	return &corev1.Pod{
		Metadata: &metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": app, "tier": "bench"},
			Annotations: map[string]string{"bench.podline.dev/padding": strings.Repeat("x", 600)}},
		Spec: &corev1.PodSpec{Containers: []*corev1.Container{{Name: "web", Image: "registry.podline:5000/demo/web:1.0",
			Resources: &corev1.ResourceRequirements{Requests: map[string]string{"cpu": "100m", "memory": "64Mi"}}}}},
	}
}

// parallel runs n calls over c workers and returns calls per second.
func parallel(n, c int, fn func(i int) error) float64 {
	var next atomic.Int64
	var failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(i); err != nil && failed.Add(1) == 1 {
					slog.Warn("call failed", "err", err)
				}
			}
		}()
	}
	wg.Wait()
	return float64(n-int(failed.Load())) / time.Since(start).Seconds()
}

func waitCached(ctx context.Context, pods *client.Client[*corev1.Pod], selector string, want int) error {
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		items, _, err := pods.List(ctx, &metav1.ListRequest{LabelSelector: selector, ResourceVersion: "0"})
		if err != nil {
			return err
		}
		if len(items) >= want {
			return nil
		}
	}
	return fmt.Errorf("watch cache did not reach %d pods", want)
}

func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func rssMB() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			var kb int
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:")), "%d", &kb)
			return kb / 1024
		}
	}
	return -1
}

// startEtcd runs etcd as its own process on loopback ports in a temp dir.
func startEtcd(ctx context.Context, bin string) (*clientv3.Client, func(), error) {
	dir, err := os.MkdirTemp("", "bench-etcd")
	if err != nil {
		return nil, nil, err
	}
	cport, pport := freePort(), freePort()
	curl := fmt.Sprintf("http://127.0.0.1:%d", cport)
	purl := fmt.Sprintf("http://127.0.0.1:%d", pport)
	cmd := exec.CommandContext(ctx, bin, "--data-dir", filepath.Join(dir, "data"), "--log-level", "error",
		"--listen-client-urls", curl, "--advertise-client-urls", curl,
		"--listen-peer-urls", purl, "--initial-advertise-peer-urls", purl, "--initial-cluster", "default="+purl)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start %s: %w (run make bin/etcd)", bin, err)
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = os.RemoveAll(dir) }
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{curl}, DialTimeout: 5 * time.Second, MaxCallRecvMsgSize: storage.MaxEtcdResponseBytes})
	if err != nil {
		stop()
		return nil, nil, err
	}
	for i := 0; ; i++ {
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := c.Get(sctx, "health")
		cancel()
		if err == nil {
			break
		}
		if i > 30 {
			stop()
			return nil, nil, fmt.Errorf("etcd did not start: %w", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return c, func() { _ = c.Close(); stop() }, nil
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
