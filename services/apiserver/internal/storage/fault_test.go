package storage_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/apiserver/internal/storage"
)

// Modes of a faultyPath.
const (
	pass        int32 = iota
	blackhole         // nothing crosses, connections stay open (a killed member's host)
	dropReplies       // requests reach etcd, answers are lost
)

// faultyPath is a TCP path to etcd that can stop forwarding without
// closing its connections, as a vanished member or a cut network does.
type faultyPath struct {
	lis   net.Listener
	mode  atomic.Int32
	mu    sync.Mutex
	conns []net.Conn
	// accepted counts the client's connections through this path.
	accepted atomic.Int32
	// sent counts bytes forwarded towards etcd while answers were dropped.
	sent atomic.Int64
}

func newFaultyPath(t *testing.T, target string) *faultyPath {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultyPath{lis: lis}
	// Runs before etcd stops (cleanups run last-registered first), so a
	// connection left hanging by a fault cannot hold etcd's shutdown.
	t.Cleanup(func() {
		lis.Close()
		p.mode.Store(pass)
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			p.accepted.Add(1)
			go p.pipe(u, c, false)
			go p.pipe(c, u, true)
		}
	}()
	return p
}

// pipe copies src to dst; reply tells whether src is etcd.
func (p *faultyPath) pipe(dst, src net.Conn, reply bool) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			for p.mode.Load() == blackhole {
				time.Sleep(10 * time.Millisecond)
			}
			switch {
			case reply && p.mode.Load() == dropReplies:
				// lost on the way back
			default:
				if !reply && p.mode.Load() == dropReplies {
					p.sent.Add(int64(n))
				}
				if _, err := dst.Write(buf[:n]); err != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// With one of three paths to etcd failing, every create succeeds exactly
// once, with the resourceVersion it was stored at — also when the write
// reached etcd and only its answer was lost.
func TestWritesSurviveAVanishedPath(t *testing.T) {
	etcd := apiservertest.StartEtcd(t)
	target := strings.TrimPrefix(etcd.Endpoint, "http://")
	var paths []*faultyPath
	var endpoints []string
	for range 3 {
		p := newFaultyPath(t, target)
		paths = append(paths, p)
		endpoints = append(endpoints, "http://"+p.lis.Addr().String())
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	store := storage.NewStore(cli, 3*time.Second)
	codec := storage.Codec{APIVersion: "v1", Kind: "ConfigMap", New: func() object.Object { return &corev1.ConfigMap{} }}
	ctx := context.Background()

	// Warm up until the client holds a connection on every path, so the
	// round robin sends some calls through the faulty one.
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		if _, err := store.CurrentRevision(ctx); err != nil {
			t.Fatalf("warm-up %d: %v", i, err)
		}
		if paths[0].accepted.Load() > 0 && paths[1].accepted.Load() > 0 && paths[2].accepted.Load() > 0 && i >= 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the client did not connect through every path: %d %d %d",
				paths[0].accepted.Load(), paths[1].accepted.Load(), paths[2].accepted.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, mode := range []int32{blackhole, dropReplies} {
		paths[1].mode.Store(mode)
		for i := range 9 {
			name := fmt.Sprintf("m%d-%d", mode, i)
			key := "/registry/configmaps/default/" + name
			cm := &corev1.ConfigMap{Metadata: &metav1.ObjectMeta{Name: name, Namespace: "default", Uid: name}}
			out, err := store.Create(ctx, key, codec, cm)
			if err != nil {
				t.Fatalf("mode %d: create %s: %v", mode, name, err)
			}
			got, err := store.Get(ctx, key, codec, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got.GetMetadata().GetResourceVersion() != out.GetMetadata().GetResourceVersion() {
				t.Errorf("%s: create answered rv %s, stored at %s", name, out.GetMetadata().GetResourceVersion(), got.GetMetadata().GetResourceVersion())
			}
			// An update through the same paths.
			upd, err := store.GuaranteedUpdate(ctx, key, codec, func(cur object.Object) (object.Object, bool, error) {
				next := object.Copy(cur).(*corev1.ConfigMap)
				next.Data = map[string]string{"n": name}
				return next, false, nil
			})
			if err != nil {
				t.Fatalf("mode %d: update %s: %v", mode, name, err)
			}
			got, _ = store.Get(ctx, key, codec, 0)
			if got.GetMetadata().GetResourceVersion() != upd.GetMetadata().GetResourceVersion() {
				t.Errorf("%s: update answered rv %s, stored at %s", name, upd.GetMetadata().GetResourceVersion(), got.GetMetadata().GetResourceVersion())
			}
		}
		paths[1].mode.Store(pass)
	}
	if paths[1].sent.Load() == 0 {
		t.Fatal("no request went through the path that lost answers: the test did not exercise a lost reply")
	}
}
