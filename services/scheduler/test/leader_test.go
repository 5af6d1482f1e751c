package test

import (
	"context"
	"testing"
	"time"

	"podline.dev/pkg/client"
	"podline.dev/services/scheduler/internal/app"
	"podline.dev/services/scheduler/internal/profile"
	"podline.dev/services/scheduler/internal/scheduler"
	st "podline.dev/services/scheduler/testing"
)

// replica runs one scheduler process with leader election and reports
// itself in events as host.
func (e *env) replica(host string) (stop func()) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, app.Config{
			Conn: e.s.Conn, Profile: profile.Default(), Logger: quietLogger(),
			LeaderElect: true, LockNamespace: "kube-system", LockName: "kube-scheduler", Identity: host + "_id",
			LeaseDuration: 2 * time.Second, RenewDeadline: 1500 * time.Millisecond, RetryPeriod: 200 * time.Millisecond,
			SchedulerOptions: []scheduler.Option{scheduler.WithHost(host)},
		})
	}()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("replica %s: %v", host, err)
		}
	}
	e.t.Cleanup(stop)
	return stop
}

func (e *env) scheduledBy(pod string) string {
	if ev := e.eventFor("Scheduled", pod); ev != nil {
		return ev.GetReportingInstance()
	}
	return ""
}

func TestTwoReplicasOneActiveAndHandOver(t *testing.T) {
	e := newEnv(t)
	e.createNode(st.MakeNode().Name("node-1").Capacity("4", "8Gi").Obj())
	stopA := e.replica("replica-a")
	e.eventually(10*time.Second, "replica-a to lead", func() bool {
		l, err := client.Leases(e.s.Conn).Get(e.ctx, "kube-system", "kube-scheduler")
		return err == nil && l.GetSpec().GetHolderIdentity() == "replica-a_id"
	})
	e.replica("replica-b")

	for _, name := range []string{"p1", "p2", "p3"} {
		e.createPod(st.MakePod().Name(name).Req("100m", "").Obj())
	}
	for _, name := range []string{"p1", "p2", "p3"} {
		e.waitBound(name, 10*time.Second)
		e.eventually(5*time.Second, "the Scheduled event of "+name, func() bool { return e.scheduledBy(name) != "" })
		if by := e.scheduledBy(name); by != "replica-a" {
			t.Errorf("%s scheduled by %q, want replica-a (the leader)", name, by)
		}
	}

	stopA()
	e.eventually(10*time.Second, "replica-b to lead", func() bool {
		l, err := client.Leases(e.s.Conn).Get(e.ctx, "kube-system", "kube-scheduler")
		return err == nil && l.GetSpec().GetHolderIdentity() == "replica-b_id"
	})
	e.createPod(st.MakePod().Name("p4").Req("100m", "").Obj())
	e.waitBound("p4", 10*time.Second)
	e.eventually(5*time.Second, "the Scheduled event of p4", func() bool { return e.scheduledBy("p4") != "" })
	if by := e.scheduledBy("p4"); by != "replica-b" {
		t.Errorf("p4 scheduled by %q, want replica-b", by)
	}
}
