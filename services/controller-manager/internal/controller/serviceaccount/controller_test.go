package serviceaccount

import (
	"context"
	"testing"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	ctltest "podline.dev/services/controller-manager/internal/controller/testing"
)

func newFixture(t *testing.T) (*ctltest.Fixture, *Controller) {
	t.Helper()
	f := ctltest.NewFixture(t)
	sc, err := New(f.Context)
	if err != nil {
		t.Fatal(err)
	}
	return f, sc
}

func account(ns, name string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{Metadata: &metav1.ObjectMeta{Name: name, Namespace: ns}}
}

func terminating(name string) *corev1.Namespace {
	ns := ctltest.Namespace(name)
	ns.Metadata.DeletionTimestamp = &metav1.Time{Seconds: ctltest.Epoch.Unix()}
	ns.Status.Phase = "Terminating"
	return ns
}

func TestActiveNamespaceGetsDefaultAccount(t *testing.T) {
	f, sc := newFixture(t)
	f.Add(ctltest.Namespace("team"), account("team", "builder"))
	if err := sc.Sync(context.Background(), "team"); err != nil {
		t.Fatal(err)
	}
	f.ExpectWrites("create serviceaccounts team/default")
	if f.Conn.Object("serviceaccounts", "team", "default") == nil {
		t.Error("no default account stored")
	}
}

func TestNamespaceWithDefaultAccountIsLeftAlone(t *testing.T) {
	f, sc := newFixture(t)
	f.Add(ctltest.Namespace("team"), account("team", "default"))
	if err := sc.Sync(context.Background(), "team"); err != nil {
		t.Fatal(err)
	}
	f.ExpectWrites()
}

func TestAccountCreatedMeanwhileIsNoError(t *testing.T) {
	f, sc := newFixture(t)
	f.Add(ctltest.Namespace("team"))
	f.Conn.Seed(account("team", "default")) // the apiserver has it; the cache not yet
	if err := sc.Sync(context.Background(), "team"); err != nil {
		t.Fatalf("AlreadyExists must not requeue: %v", err)
	}
}

func TestTerminatingOrMissingNamespaceGetsNothing(t *testing.T) {
	f, sc := newFixture(t)
	f.Add(terminating("going"))
	for _, ns := range []string{"going", "gone"} {
		if err := sc.Sync(context.Background(), ns); err != nil {
			t.Fatal(err)
		}
	}
	f.ExpectWrites()
}
