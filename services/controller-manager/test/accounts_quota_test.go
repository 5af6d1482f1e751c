package test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/controller-manager/internal/app"
	"podline.dev/services/controller-manager/internal/controller/rootcacert"
)

// startSecureManager runs the controller-manager as
// system:kube-controller-manager over TLS against a server with RBAC, so
// its writes are authorized by the bootstrap policy, publishing the
// server's CA as the root CA. It returns that CA.
func startSecureManager(t *testing.T, s *apiservertest.Server) string {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(s.PKI, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	conn := s.Dial(t, s.Credentials(t, "system:kube-controller-manager"))
	ctx, cancel := context.WithCancel(context.Background())
	opts := testOptions()
	opts.RootCA = string(ca)
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, app.Config{Conn: conn, Options: opts, Log: quietLog()}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("controller-manager: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("controller-manager did not stop")
		}
	})
	return string(ca)
}

func createNamespace(ctx context.Context, t *testing.T, s *apiservertest.Server, name string) {
	t.Helper()
	if _, err := client.Namespaces(s.Conn).Create(ctx, &corev1.Namespace{Metadata: &metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

func TestNamespaceGetsDefaultAccountAndRootCAThatComeBack(t *testing.T) {
	s := apiservertest.StartSecure(t, apiservertest.WithoutDefaultServiceAccounts())
	ca := startSecureManager(t, s)
	ctx := ctxFor(t, 60*time.Second)
	createNamespace(ctx, t, s, "team")
	accounts, cms := client.ServiceAccounts(s.Conn), client.ConfigMaps(s.Conn)

	accountUID := func(ns string) (string, bool) {
		sa, err := accounts.Get(ctx, ns, "default")
		if err != nil {
			return err.Error(), false
		}
		return sa.GetMetadata().GetUid(), true
	}
	published := func(ns string) (bool, string) {
		cm, err := cms.Get(ctx, ns, rootcacert.ConfigMapName)
		if err != nil {
			return false, err.Error()
		}
		return cm.GetData()["ca.crt"] == ca && len(cm.GetData()) == 1, fmt.Sprintf("data %v", cm.GetData())
	}
	for _, ns := range []string{"team", "default", "kube-system"} {
		eventually(t, 10*time.Second, ns+" has the default service account", func() (bool, string) {
			state, ok := accountUID(ns)
			return ok, state
		})
		eventually(t, 10*time.Second, ns+" has the root CA", func() (bool, string) { return published(ns) })
	}

	first, _ := accountUID("team")
	if _, err := accounts.Delete(ctx, "team", "default", nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the deleted account is back", func() (bool, string) {
		uid, ok := accountUID("team")
		return ok && uid != first, uid
	})

	cm, err := cms.Get(ctx, "team", rootcacert.ConfigMapName)
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"ca.crt": "forged"}
	if _, err := cms.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the edited root CA is repaired", func() (bool, string) { return published("team") })
	if _, err := cms.Delete(ctx, "team", rootcacert.ConfigMapName, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the deleted root CA is back", func() (bool, string) { return published("team") })
}

func quotaPod(name string) *corev1.Pod {
	return &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: name, Namespace: "team"},
		Spec: &corev1.PodSpec{Containers: []*corev1.Container{{Name: "web", Image: "web:1"}}}}
}

func TestQuotaAdmitsExactlyWhatFitsAndFreesOnDelete(t *testing.T) {
	s := apiservertest.StartSecure(t)
	startSecureManager(t, s)
	ctx := ctxFor(t, 60*time.Second)
	createNamespace(ctx, t, s, "team")
	quotas, pods := client.For[*corev1.ResourceQuota](s.Conn), client.Pods(s.Conn)
	q := &corev1.ResourceQuota{Metadata: &metav1.ObjectMeta{Name: "two-pods", Namespace: "team"},
		Spec: &corev1.ResourceQuotaSpec{Hard: map[string]string{"pods": "2"}}}
	if _, err := quotas.Create(ctx, q); err != nil {
		t.Fatal(err)
	}
	used := func() string {
		q, err := quotas.Get(ctx, "team", "two-pods")
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("hard %v used %v", q.GetStatus().GetHard(), q.GetStatus().GetUsed())
	}
	eventually(t, 10*time.Second, "the controller fills the quota's status", func() (bool, string) {
		u := used()
		return u == "hard map[pods:2] used map[pods:0]", u
	})

	var wg sync.WaitGroup
	errs := make([]error, 5)
	for i := range errs {
		wg.Go(func() { _, errs[i] = pods.Create(ctx, quotaPod(fmt.Sprintf("p%d", i))) })
	}
	wg.Wait()
	created := 0
	var admitted []string
	for i, err := range errs {
		switch {
		case err == nil:
			created++
			admitted = append(admitted, fmt.Sprintf("p%d", i))
		case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota: two-pods, requested: pods=1, used: pods=2, limited: pods=2"):
		default:
			t.Errorf("create p%d: %v", i, err)
		}
	}
	if created != 2 {
		t.Fatalf("%d of 5 concurrent creates admitted under pods: 2 (%v)", created, errs)
	}
	if u := used(); u != "hard map[pods:2] used map[pods:2]" {
		t.Errorf("after the creates: %s", u)
	}

	if _, err := pods.Delete(ctx, "team", admitted[0], &metav1.DeleteOptions{GracePeriodSeconds: proto.Int64(0)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the deleted pod's share is given back", func() (bool, string) {
		u := used()
		return u == "hard map[pods:2] used map[pods:1]", u
	})
	if _, err := pods.Create(ctx, quotaPod("after")); err != nil {
		t.Fatalf("the freed share is refused: %v", err)
	}
}
