package test

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"podline.dev/pkg/client"
	"podline.dev/pkg/watch"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/watchcache/internal/replica"
)

// watchThrough lists and watches pods through conn, writes one pod to the
// apiserver and expects to see it.
func watchThrough(t *testing.T, ctx context.Context, conn grpc.ClientConnInterface, api *apiservertest.Server, name string) {
	t.Helper()
	pods := client.Pods(conn)
	_, lm, err := pods.List(ctx, &metav1.ListRequest{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	w, err := pods.Watch(ctx, &metav1.ListRequest{ResourceVersion: lm.GetResourceVersion()})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	if _, err := pods.Create(ctx, pod(name, nil)); err != nil {
		t.Fatalf("create through the split connection: %v", err)
	}
	ev := collect(t, w, 1, 30*time.Second)[0]
	if ev.Type != watch.Added || ev.Object.GetMetadata().GetName() != name {
		t.Fatalf("got %s %s, want ADDED %s", ev.Type, ev.Object.GetMetadata().GetName(), name)
	}
}

func TestClientsWatchThroughAReplicaAndFallBackWithoutOne(t *testing.T) {
	ctx := ctxFor(t)
	n := startNATS(t)
	api := apiservertest.Start(t, apiservertest.WithNATS(n.URL))

	t.Run("ready replica serves the watch", func(t *testing.T) {
		rep := startReplica(t, n.URL, api)
		watchThrough(t, ctx, client.WithWatchEndpoint(api.Conn, rep.Conn), api, "through")
		if _, m, _ := rep.Stats("pods"); m.EventsQueued == 0 {
			t.Errorf("the replica fanned out no event: the watch did not go through it")
		}
	})

	t.Run("unreachable replica", func(t *testing.T) {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := lis.Addr().String()
		_ = lis.Close()
		dead, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer dead.Close()
		watchThrough(t, ctx, client.WithWatchEndpoint(api.Conn, dead), api, "unreachable")
	})

	t.Run("replica without NATS is not ready", func(t *testing.T) {
		r, err := replica.New(replica.Config{NATSURL: "nats://127.0.0.1:1", Apiserver: api.Conn, Name: "no-nats"})
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithCancel(ctx)
		defer cancel()
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go r.Run(rctx)
		go func() { _ = r.ServeGRPC(rctx, lis) }()
		if r.Ready() == nil {
			t.Fatal("a replica without NATS says it is ready")
		}
		conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		watchThrough(t, ctx, client.WithWatchEndpoint(api.Conn, conn), api, "notready")
	})
}
