package test

import (
	"testing"
	"time"

	"podline.dev/pkg/client"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/watchcache/internal/replica"
)

// NATS restarts faster than the replica's grace, while pods are written,
// and then nothing more is written: the messages the apiserver could not
// publish are lost, and the next progress mark (sent although the
// revision has not moved since them) shows the replica the gap in their
// numbers, which it fills from the apiserver. Its watchers see every event
// without another write.
func TestQuickNATSRestartOnAQuietResourceLosesNothing(t *testing.T) {
	ctx := ctxFor(t)
	n := startNATS(t)
	api := apiservertest.Start(t, apiservertest.WithNATS(n.URL))
	rep := startReplicaWith(t, n.URL, api, replica.Config{NATSGrace: time.Minute})
	direct := client.Pods(api.Conn)
	w, err := client.Pods(rep.Conn).Watch(ctx, &metav1.ListRequest{ResourceVersion: listRV(t, ctx, direct)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	const events = 9
	got := reading(t, w, events)
	n.stop()
	if err := churn(ctx, direct, "q", events); err != nil {
		t.Fatal(err)
	}
	n.start(t)
	if evs := got(); len(evs) != events {
		t.Fatalf("%d of the %d events written while NATS was away reached the replica's watcher", len(evs), events)
	}
	if stats, _, _ := rep.Stats("pods"); stats.Fills == 0 {
		t.Errorf("replica stats %+v: the events came without a fill", stats)
	}
}
