package proxier

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/knftables"

	"podline.dev/pkg/clock"
	corev1 "podline.dev/proto/core/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
	"podline.dev/services/proxy/internal/rules"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files under testdata/")

// recorder is a knftables.Interface that remembers the transactions run.
type recorder struct {
	*knftables.Fake
	mu  sync.Mutex
	txs []string
}

func newRecorder() *recorder {
	return &recorder{Fake: knftables.NewFake(knftables.IPv4Family, rules.Table)}
}

func (r *recorder) Run(ctx context.Context, tx *knftables.Transaction) error {
	r.mu.Lock()
	r.txs = append(r.txs, tx.String())
	r.mu.Unlock()
	return r.Fake.Run(ctx, tx)
}

func (r *recorder) last() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.txs) == 0 {
		return ""
	}
	return r.txs[len(r.txs)-1]
}

// dump is the fake's table with set and map elements sorted (the fake
// keeps them in insertion order, which partial syncs change).
func dump(f *knftables.Fake) string {
	var rest, elems []string
	for _, l := range strings.Split(strings.TrimSpace(f.Dump()), "\n") {
		if strings.HasPrefix(l, "add element ") {
			elems = append(elems, l)
		} else {
			rest = append(rest, l)
		}
	}
	slices.Sort(elems)
	return strings.Join(append(rest, elems...), "\n") + "\n"
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *rewrite {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -rewrite to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the rules written (go test -rewrite to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

var testNode = rules.NodeInfo{ClusterCIDR: "10.244.0.0/16"}

func newTestProxier(nft knftables.Interface, src Source, node rules.NodeInfo) *Proxier {
	return New(Config{NodeName: "worker-1", Node: func() rules.NodeInfo { return node },
		MinSyncPeriod: time.Second, SyncPeriod: 30 * time.Second},
		nft, src, clock.NewFake(time.Unix(1_700_000_000, 0)), slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
}

func load(src *MemorySource, svcs []*corev1.Service, sls []*discoveryv1.EndpointSlice) {
	for _, s := range svcs {
		src.SetService(s)
	}
	for _, s := range sls {
		src.SetSlice(s)
	}
}

func TestFullSyncWritesKubeProxyLayout(t *testing.T) {
	tests := []struct {
		name   string
		node   rules.NodeInfo
		svcs   []*corev1.Service
		slices []*discoveryv1.EndpointSlice
	}{{
		name: "clusterip",
		svcs: []*corev1.Service{MakeService("default", "web").ClusterIP("10.96.0.20").Port("http", 80, 8080).Obj()},
		slices: []*discoveryv1.EndpointSlice{
			MakeSlice("default", "web", "web-abc").Port("http", 8080).Ready("10.244.1.3", "10.244.2.4").NotReady("10.244.1.9").Obj(),
		},
	}, {
		name: "nodeport",
		svcs: []*corev1.Service{MakeService("default", "web").ClusterIP("10.96.0.20").Type("NodePort").
			PortProto("http", "TCP", 80, 8080, 30080).Obj()},
		slices: []*discoveryv1.EndpointSlice{MakeSlice("default", "web", "web-abc").Port("http", 8080).Ready("10.244.1.3").Obj()},
	}, {
		name: "nodeport-addresses",
		node: rules.NodeInfo{ClusterCIDR: "10.244.0.0/16", NodePortIPs: []string{"172.18.0.5"}},
		svcs: []*corev1.Service{MakeService("default", "web").ClusterIP("10.96.0.20").Type("NodePort").
			PortProto("http", "TCP", 80, 8080, 30080).Obj()},
		slices: []*discoveryv1.EndpointSlice{MakeSlice("default", "web", "web-abc").Port("http", 8080).Ready("10.244.1.3").Obj()},
	}, {
		name: "headless-and-externalname-ignored",
		svcs: []*corev1.Service{
			MakeService("default", "db").ClusterIP("None").Port("", 5432, 5432).Obj(),
			MakeService("default", "ext").ExternalName("example.com").Obj(),
		},
		slices: []*discoveryv1.EndpointSlice{MakeSlice("default", "db", "db-1").Port("", 5432).Ready("10.244.1.7").Obj()},
	}, {
		name: "no-endpoints-rejected",
		svcs: []*corev1.Service{MakeService("default", "web").ClusterIP("10.96.0.20").Type("NodePort").
			PortProto("http", "TCP", 80, 8080, 30080).Obj()},
		slices: []*discoveryv1.EndpointSlice{MakeSlice("default", "web", "web-abc").Port("http", 8080).NotReady("10.244.1.3").Obj()},
	}, {
		// targetPort "http" is 8080 on one Pod and 9090 on another: the
		// EndpointSlice controller puts them in two slices.
		name: "named-target-port",
		svcs: []*corev1.Service{MakeService("default", "web").ClusterIP("10.96.0.20").
			Port("web", 80, "http").PortProto("dns", "UDP", 53, "dns", 0).Obj()},
		slices: []*discoveryv1.EndpointSlice{
			MakeSlice("default", "web", "web-a").Port("web", 8080).Ready("10.244.1.3").Obj(),
			MakeSlice("default", "web", "web-b").Port("web", 9090).Ready("10.244.2.4").Obj(),
			func() *discoveryv1.EndpointSlice {
				s := MakeSlice("default", "web", "web-dns").Ready("10.244.1.3").Obj()
				s.Ports = append(s.Ports, &discoveryv1.EndpointPort{Name: ptr("dns"), Protocol: ptr("UDP"), Port: ptr(int32(5353))})
				return s
			}(),
		},
	}, {
		name: "terminating-only-when-none-ready",
		svcs: []*corev1.Service{
			MakeService("default", "draining").ClusterIP("10.96.0.30").Port("", 80, 8080).Obj(),
			MakeService("default", "mixed").ClusterIP("10.96.0.31").Port("", 80, 8080).Obj(),
		},
		slices: []*discoveryv1.EndpointSlice{
			MakeSlice("default", "draining", "d-1").Port("", 8080).Terminating("10.244.1.5", true).Terminating("10.244.1.6", false).Obj(),
			MakeSlice("default", "mixed", "m-1").Port("", 8080).Ready("10.244.2.5").Terminating("10.244.2.6", true).Obj(),
		},
	}, {
		name: "session-affinity",
		svcs: []*corev1.Service{MakeService("default", "sticky").ClusterIP("10.96.0.40").Port("", 80, 8080).ClientIPAffinity(600).Obj()},
		slices: []*discoveryv1.EndpointSlice{
			MakeSlice("default", "sticky", "s-1").Port("", 8080).Ready("10.244.1.3", "10.244.2.3").Obj(),
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := tt.node
			if node.ClusterCIDR == "" {
				node = testNode
			}
			src := NewMemorySource()
			load(src, tt.svcs, tt.slices)
			nft := newRecorder()
			p := newTestProxier(nft, src, node)
			if err := p.Sync(context.Background()); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, dump(nft.Fake))
		})
	}
}

func TestPartialSyncTouchesOnlyTheChangedService(t *testing.T) {
	src := NewMemorySource()
	load(src, []*corev1.Service{
		MakeService("default", "a").ClusterIP("10.96.0.10").Port("", 80, 8080).Obj(),
		MakeService("default", "b").ClusterIP("10.96.0.11").Port("", 80, 8080).Obj(),
	}, []*discoveryv1.EndpointSlice{
		MakeSlice("default", "a", "a-1").Port("", 8080).Ready("10.244.1.2", "10.244.1.3").Obj(),
		MakeSlice("default", "b", "b-1").Port("", 8080).Ready("10.244.2.2").Obj(),
	})
	nft := newRecorder()
	p := newTestProxier(nft, src, testNode)
	ctx := context.Background()
	if err := p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	// 10.244.1.3 is replaced by 10.244.1.4.
	p.SliceChanged(MakeSlice("default", "a", "a-1").Obj())
	src.SetSlice(MakeSlice("default", "a", "a-1").Port("", 8080).Ready("10.244.1.2", "10.244.1.4").Obj())
	if err := p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	tx := nft.last()
	if strings.Contains(tx, "default/b") {
		t.Errorf("the partial sync touched Service b:\n%s", tx)
	}
	golden(t, "incremental-tx", tx)
	golden(t, "incremental", dump(nft.Fake))

	// A full sync of the same state writes the same table.
	again := newRecorder()
	q := newTestProxier(again, src, testNode)
	if err := q.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := dump(nft.Fake), dump(again.Fake); got != want {
		t.Errorf("partial sync left\n%s\nfull sync writes\n%s", got, want)
	}
}

func TestPartialSyncRemovesADeletedServiceAndFullSyncRemovesStaleChains(t *testing.T) {
	src := NewMemorySource()
	load(src, []*corev1.Service{MakeService("default", "a").ClusterIP("10.96.0.10").Port("", 80, 8080).ClientIPAffinity(60).Obj()},
		[]*discoveryv1.EndpointSlice{MakeSlice("default", "a", "a-1").Port("", 8080).Ready("10.244.1.2").Obj()})
	nft := newRecorder()
	p := newTestProxier(nft, src, testNode)
	ctx := context.Background()
	if err := p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	empty := newRecorder()
	if err := newTestProxier(empty, NewMemorySource(), testNode).Sync(ctx); err != nil {
		t.Fatal(err)
	}
	src.DeleteService("default/a")
	p.ServiceChanged("default/a")
	if err := p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := dump(nft.Fake), dump(empty.Fake); got != want {
		t.Errorf("after the delete the table is\n%s\nwant\n%s", got, want)
	}

	// A chain left by an earlier run is removed by the next full sync.
	tx := nft.NewTransaction()
	tx.Add(&knftables.Chain{Name: "service-OLD-default/gone/tcp/"})
	if err := nft.Fake.Run(ctx, tx); err != nil {
		t.Fatal(err)
	}
	p.needFull = true
	if err := p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := dump(nft.Fake), dump(empty.Fake); got != want {
		t.Errorf("after a full sync the table is\n%s\nwant\n%s", got, want)
	}
}
