// Package leaderelection lets one replica of a component act while the others
// wait, as client-go's tools/leaderelection does, on a coordination.k8s.io/v1
// Lease (kube-system/kube-scheduler, kube-system/kube-controller-manager).
//
// A LeaderElector tries every RetryPeriod (with jitter) to take the Lease.
// It may take it when nobody holds it, or when the holder has not renewed it
// for LeaseDuration as this candidate has observed it on its own clock (so
// clocks need not agree). Once leader it runs OnStartedLeading(ctx) in a
// goroutine and renews every RetryPeriod; if it cannot renew within
// RenewDeadline it cancels that ctx and Run returns. With ReleaseOnCancel,
// cancelling Run's context clears holderIdentity so that another candidate
// takes over at once instead of after LeaseDuration. Every write of the Lease
// carries the resourceVersion read before it, so two candidates never both
// believe they took it.
//
//	lock := leaderelection.NewLeaseLock(conn, "kube-system", "kube-scheduler", leaderelection.DefaultIdentity())
//	le, err := leaderelection.New(leaderelection.Config{
//		Lock:            lock,
//		ReleaseOnCancel: true,
//		Callbacks: leaderelection.Callbacks{
//			OnStartedLeading: func(ctx context.Context) { runScheduler(ctx) },
//			OnStoppedLeading: func() { slog.Info("no longer the leader") },
//		},
//	})
//	if err != nil { ... }
//	le.Run(ctx) // returns when ctx is done or leadership is lost
//
// The zero durations mean Kubernetes' defaults: 15 s lease, 10 s renew
// deadline, 2 s retry. Time comes from an injected clock.Clock; the decision
// of whether a record may be taken (decide.go) is a pure function. The Lock
// interface is the one seam to the apiserver: LeaseLock implements it over
// the gRPC client.
package leaderelection
