package compat

import (
	"fmt"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
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

// kubectl auth whoami and kubectl auth can-i: the self-review APIs answer
// with the chain's view of the caller.
func TestSelfReviewsThroughClientGo(t *testing.T) {
	ctx := ctxFor(t)
	s := apiservertest.StartSecure(t)
	alice := s.Credentials(t, "alice", "devs")
	as := secureClient(t, s, alice.CertFile, alice.KeyFile, "")

	who, err := as.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || who.Status.UserInfo.Username != "alice" || len(who.Status.UserInfo.Groups) != 2 {
		t.Fatalf("whoami: %+v, %v", who, err)
	}
	canI := func(verb, resource, ns string) (bool, string) {
		t.Helper()
		r, err := as.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Resource: resource, Namespace: ns}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status.Allowed, r.Status.Reason
	}
	if ok, _ := canI("create", "pods", "default"); ok {
		t.Fatal("alice can create pods before any binding")
	}
	if _, err := secureClient(t, s, "", "", "").AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{}, metav1.CreateOptions{}); !apierrors.IsUnauthorized(err) {
		t.Fatalf("anonymous review: %v", err)
	}
	adminCfg, err := clientcmd.BuildConfigFromFlags("", s.PKI+"/kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	adminCfg.Host = s.URL
	admin := kubernetes.NewForConfigOrDie(adminCfg)
	if _, err := admin.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "alice-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() error {
		if ok, reason := canI("create", "pods", "default"); !ok {
			return fmt.Errorf("not yet allowed (%s)", reason)
		}
		return nil
	})
	if ok, reason := canI("create", "pods", "default"); reason != `RBAC: allowed by RoleBinding "alice-admin" of ClusterRole "cluster-admin" to alice` || !ok {
		t.Fatalf("reason %q", reason)
	}
	if ok, _ := canI("list", "nodes", ""); ok {
		t.Fatal("a RoleBinding granted a cluster-scoped resource")
	}
}

// kubectl sends TokenRequests and access reviews in Kubernetes' protobuf:
// `kubectl create token` and `kubectl auth can-i` through client-go's
// protobuf encoder.
func TestTokenRequestAndAccessReviewInProtobuf(t *testing.T) {
	ctx := ctxFor(t)
	s := apiservertest.StartSecure(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", s.PKI+"/kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Host = s.URL
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	admin := kubernetes.NewForConfigOrDie(cfg)
	if _, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	secs := int64(7200)
	tr, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, "builder", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{Audiences: []string{"https://kubernetes.default.svc.cluster.local"}, ExpirationSeconds: &secs},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create token: %v", err)
	}
	if tr.Status.Token == "" || *tr.Spec.ExpirationSeconds != 7200 || time.Until(tr.Status.ExpirationTimestamp.Time) < 119*time.Minute {
		t.Fatalf("token request: %+v", tr)
	}
	short := int64(60)
	if _, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, "builder", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &short},
	}, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("60 s token: %v", err)
	}
	saCfg := config(s)
	saCfg.TLSClientConfig = rest.TLSClientConfig{CAFile: s.PKI + "/ca.crt"}
	saCfg.BearerToken, saCfg.ContentType = tr.Status.Token, "application/vnd.kubernetes.protobuf"
	sa := kubernetes.NewForConfigOrDie(saCfg)
	who, err := sa.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || who.Status.UserInfo.Username != "system:serviceaccount:default:builder" {
		t.Fatalf("the token's whoami: %+v, %v", who, err)
	}
	review, err := sa.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets", Namespace: "default", Name: "x"}},
	}, metav1.CreateOptions{})
	if err != nil || review.Status.Allowed {
		t.Fatalf("service account can-i get secrets: %+v, %v", review, err)
	}
	if _, err := admin.RbacV1().Roles("default").Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "read-x"},
		Rules:      []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"x"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "builder-read-x"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "builder", Namespace: "default"}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read-x"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	canGet := func(name string) bool {
		r, err := sa.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets", Namespace: "default", Name: name}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status.Allowed
	}
	eventually(t, 5*time.Second, func() error {
		if !canGet("x") {
			return fmt.Errorf("get secret x not allowed yet")
		}
		return nil
	})
	if canGet("y") {
		t.Fatal("the review ignored the resource name")
	}
	// kubectl auth can-i --list
	rules, err := sa.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{
		Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "default"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rules.Status.ResourceRules {
		found = found || (len(r.Resources) == 1 && r.Resources[0] == "secrets" && len(r.ResourceNames) == 1 && r.ResourceNames[0] == "x")
	}
	if !found || len(rules.Status.NonResourceRules) == 0 || rules.Status.Incomplete {
		t.Fatalf("rules review: %+v", rules.Status)
	}
	review, err = admin.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{NonResourceAttributes: &authorizationv1.NonResourceAttributes{Verb: "get", Path: "/healthz"}},
	}, metav1.CreateOptions{})
	if err != nil || !review.Status.Allowed {
		t.Fatalf("admin can-i get /healthz: %+v, %v", review, err)
	}
}

// kubectl --as and --as-group through client-go's impersonation config.
func TestImpersonationThroughClientGo(t *testing.T) {
	ctx := ctxFor(t)
	s := apiservertest.StartSecure(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", s.PKI+"/kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Host = s.URL
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "alice", Groups: []string{"devs"}}
	asAlice := kubernetes.NewForConfigOrDie(cfg)
	who, err := asAlice.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || who.Status.UserInfo.Username != "alice" || len(who.Status.UserInfo.Groups) != 2 {
		t.Fatalf("whoami as alice: %+v, %v", who, err)
	}
	if _, err := asAlice.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) ||
		err.Error() != `secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "default"` {
		t.Fatalf("list secrets as alice: %v", err)
	}
}

// A SubjectAccessReview sent in Kubernetes' protobuf (as the kubelet's and
// the watchcache's delegated authorizers send it) carries its field
// selector, so the Node authorizer answers for the pods of the node named.
func TestProtobufSubjectAccessReviewCarriesItsFieldSelector(t *testing.T) {
	ctx := ctxFor(t)
	s := apiservertest.StartSecure(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", s.PKI+"/kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Host = s.URL
	cfg.ContentType = protobufType
	admin := kubernetes.NewForConfigOrDie(cfg)
	for _, c := range []struct {
		name     string
		selector *authorizationv1.FieldSelectorAttributes
		allowed  bool
	}{
		{"its own pods, raw", &authorizationv1.FieldSelectorAttributes{RawSelector: "spec.nodeName=node-1"}, true},
		{"its own pods, as a requirement", &authorizationv1.FieldSelectorAttributes{
			Requirements: []metav1.FieldSelectorRequirement{{Key: "spec.nodeName", Operator: metav1.FieldSelectorOpIn, Values: []string{"node-1"}}}}, true},
		{"another node's pods", &authorizationv1.FieldSelectorAttributes{RawSelector: "spec.nodeName=node-2"}, false},
		{"every pod", nil, false},
	} {
		r, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{
				User: "system:node:node-1", Groups: []string{"system:nodes", "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "watch", Resource: "pods", FieldSelector: c.selector},
			},
		}, metav1.CreateOptions{})
		if err != nil || r.Status.Allowed != c.allowed {
			t.Errorf("%s: allowed %v (%s), %v; want %v", c.name, r.Status.Allowed, r.Status.Reason, err, c.allowed)
		}
	}
}
