package apiservertest

import (
	"context"
	"testing"

	"google.golang.org/grpc"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/watch"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// WithoutDefaultServiceAccounts leaves the namespaces without their
// "default" ServiceAccount, for tests that run the controller-manager's
// serviceaccount controller and check that it makes them.
func WithoutDefaultServiceAccounts() Option { return func(c *config) { c.noDefaultAccounts = true } }

// defaultServiceAccounts stands in for the controller-manager's
// serviceaccount controller, which tests of the other modules do not run:
// the ServiceAccount admission refuses a pod whose account does not
// exist, so every namespace, those there at start and those a test makes,
// gets its "default" account. The namespaces there at start have theirs
// before the server is handed to the test.
func defaultServiceAccounts(ctx context.Context, t testing.TB, conn grpc.ClientConnInterface) {
	t.Helper()
	nss, lm, err := client.Namespaces(conn).List(ctx, &metav1.ListRequest{})
	if err != nil {
		t.Fatalf("apiservertest: namespaces: %v", err)
	}
	for _, ns := range nss {
		if err := ensureDefaultAccount(ctx, conn, ns); err != nil {
			t.Fatalf("apiservertest: default ServiceAccount of %s: %v", ns.GetMetadata().GetName(), err)
		}
	}
	go func() {
		rv := lm.GetResourceVersion()
		for ctx.Err() == nil {
			w, err := client.Namespaces(conn).Watch(ctx, &metav1.ListRequest{ResourceVersion: rv})
			if err != nil {
				return
			}
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					rv = "" // too old: start again from the current state
					continue
				}
				if ev.Type != watch.Added && ev.Type != watch.Modified {
					continue
				}
				rv = ev.Object.GetMetadata().GetResourceVersion()
				if ev.Type == watch.Added {
					_ = ensureDefaultAccount(ctx, conn, ev.Object.(*corev1.Namespace))
				}
			}
			w.Stop()
		}
	}()
}

func ensureDefaultAccount(ctx context.Context, conn grpc.ClientConnInterface, ns *corev1.Namespace) error {
	if ns.GetMetadata().GetDeletionTimestamp() != nil {
		return nil
	}
	sa := &corev1.ServiceAccount{Metadata: &metav1.ObjectMeta{Name: "default", Namespace: ns.GetMetadata().GetName()}}
	_, err := client.ServiceAccounts(conn).Create(ctx, sa)
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
