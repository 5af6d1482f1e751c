package compat

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"podline.dev/services/apiserver/apiservertest"
)

// secureClient is client-go over TLS presenting creds' certificate (or none).
func secureClient(t *testing.T, s *apiservertest.Server, certFile, keyFile, token string) kubernetes.Interface {
	t.Helper()
	cfg := config(s)
	cfg.TLSClientConfig = rest.TLSClientConfig{CAFile: s.PKI + "/ca.crt", CertFile: certFile, KeyFile: keyFile}
	cfg.BearerToken = token
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// client-go reads podline's 401 and 403 as Kubernetes' (IsUnauthorized,
// IsForbidden with the message kubectl prints), authenticates with the
// admin kubeconfig `make certs` writes, with a user's certificate and with
// a ServiceAccount token, and a RoleBinding created through client-go
// takes effect.
func TestAuthThroughClientGo(t *testing.T) {
	ctx := ctxFor(t)
	s := apiservertest.StartSecure(t)

	adminCfg, err := clientcmd.BuildConfigFromFlags("", s.PKI+"/kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	adminCfg.Host = s.URL
	admin, err := kubernetes.NewForConfig(adminCfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("admin kubeconfig: %v", err)
	}

	anonymous := secureClient(t, s, "", "", "")
	if _, err := anonymous.CoreV1().Pods("default").List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Fatalf("anonymous list: %v", err)
	}

	alice := s.Credentials(t, "alice", "devs")
	as := secureClient(t, s, alice.CertFile, alice.KeyFile, "")
	_, err = as.CoreV1().Pods("default").Create(ctx, makePod("web").obj(), metav1.CreateOptions{})
	want := `pods is forbidden: User "alice" cannot create resource "pods" in API group "" in the namespace "default"`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("alice's create: %v\nwant %s", err, want)
	}
	if _, err := admin.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "devs-edit-pods"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "devs"}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() error {
		_, err := as.CoreV1().Pods("default").Create(ctx, makePod("web").obj(), metav1.CreateOptions{})
		return err
	})

	sa, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "reader"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token := s.ServiceAccountToken(t, "default", "reader", string(sa.UID), time.Hour)
	_, err = secureClient(t, s, "", "", token).CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) || err.Error() != `secrets is forbidden: User "system:serviceaccount:default:reader" cannot list resource "secrets" in API group "" in the namespace "default"` {
		t.Fatalf("service account token: %v", err)
	}
}
