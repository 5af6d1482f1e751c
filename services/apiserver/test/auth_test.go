package test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	rbacv1 "podline.dev/proto/rbac/v1"
	"podline.dev/services/apiserver/apiservertest"
)

// statusOf reads a REST answer's code and Status body.
func statusOf(t *testing.T, resp *http.Response) (int, map[string]any) {
	t.Helper()
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var st map[string]any
	_ = json.Unmarshal(body, &st)
	return resp.StatusCode, st
}

func restDo(t *testing.T, hc *http.Client, method, url string, body any) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return statusOf(t, resp)
}

var authPodJSON = map[string]any{
	"apiVersion": "v1", "kind": "Pod",
	"metadata": map[string]any{"name": "web"},
	"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "image": "registry.podline:5000/demo/web:1.0"}}},
}

func TestAuthAnonymousIsRefusedExceptHealth(t *testing.T) {
	s := apiservertest.StartSecure(t)
	anon := s.HTTPClient()
	for _, path := range []string{"/api/v1/namespaces/default/pods", "/apis", "/api", "/apis/apps/v1/deployments"} {
		code, st := restDo(t, anon, "GET", s.URL+path, nil)
		if code != 401 || st["reason"] != "Unauthorized" || st["kind"] != "Status" || st["message"] != "Unauthorized" {
			t.Errorf("GET %s anonymously: %d %v", path, code, st)
		}
	}
	for _, path := range []string{"/healthz", "/livez", "/readyz"} {
		resp, err := anon.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		if code, _ := statusOf(t, resp); code != 200 {
			t.Errorf("GET %s anonymously: %d, want 200 (public-info-viewer)", path, code)
		}
	}
	// gRPC with TLS but no certificate.
	conn := s.Dial(t, client.Credentials{CAFile: s.PKI + "/ca.crt"})
	_, err := client.Pods(conn).Get(ctxFor(t), "default", "x")
	if !apierrors.IsUnauthorized(err) {
		t.Fatalf("anonymous gRPC: %v", err)
	}
	// An unknown bearer token is no better than none.
	code, _ := restDo(t, s.HTTPClientWith(t, s.TokenCredentials("not-a-token")), "GET", s.URL+"/api/v1/namespaces/default/pods", nil)
	if code != 401 {
		t.Fatalf("unknown token: %d", code)
	}
}

func TestAuthRoleBindingGrantsWithinASecond(t *testing.T) {
	s := apiservertest.StartSecure(t)
	ctx := ctxFor(t)
	alice := s.Credentials(t, "alice", "devs")
	hc := s.HTTPClientWith(t, alice)
	url := s.URL + "/api/v1/namespaces/default/pods"
	want := `pods is forbidden: User "alice" cannot create resource "pods" in API group "" in the namespace "default"`

	code, st := restDo(t, hc, "POST", url, authPodJSON)
	if code != 403 || st["reason"] != "Forbidden" || st["message"] != want {
		t.Fatalf("REST create without a binding: %d %v\nwant 403 %q", code, st, want)
	}
	_, err := client.Pods(s.Dial(t, alice)).Create(ctx, pod("web", nil))
	if status.Code(err) != codes.PermissionDenied && !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("gRPC create without a binding: %v", err)
	}
	// Authenticated users still discover the API (system:discovery).
	if code, _ := restDo(t, hc, "GET", s.URL+"/apis", nil); code != 200 {
		t.Fatalf("discovery: %d", code)
	}
	if code, st := restDo(t, hc, "GET", s.URL+"/api/v1/nodes", nil); code != 403 ||
		st["message"] != `nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope` {
		t.Fatalf("cluster-scoped list: %d %v", code, st)
	}
	if nothing, _, err := client.Pods(s.Conn).List(ctx, &metav1.ListRequest{Namespace: "default"}); err != nil || len(nothing) != 0 {
		t.Fatalf("a refused create stored something: %v %v", nothing, err)
	}

	if _, err := client.For[*rbacv1.Role](s.Conn).Create(ctx, &rbacv1.Role{
		Metadata: &metav1.ObjectMeta{Namespace: "default", Name: "pod-writer"},
		Rules:    []*rbacv1.PolicyRule{{Verbs: []string{"create", "get", "list"}, ApiGroups: []string{""}, Resources: []string{"pods"}}},
	}); err != nil {
		t.Fatal(err)
	}
	granted := time.Now()
	if _, err := client.For[*rbacv1.RoleBinding](s.Conn).Create(ctx, &rbacv1.RoleBinding{
		Metadata: &metav1.ObjectMeta{Namespace: "default", Name: "devs-write-pods"},
		Subjects: []*rbacv1.Subject{{Kind: "Group", ApiGroup: "rbac.authorization.k8s.io", Name: "devs"}},
		RoleRef:  &rbacv1.RoleRef{ApiGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "pod-writer"},
	}); err != nil {
		t.Fatal(err)
	}
	for {
		code, st = restDo(t, hc, "POST", url, authPodJSON)
		if code == 201 {
			break
		}
		if code != 403 || time.Since(granted) > time.Second {
			t.Fatalf("after the RoleBinding: %d %v (%v after granting)", code, st, time.Since(granted))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("the RoleBinding took effect after %v", time.Since(granted))
	// The grant is namespaced and verb-limited.
	if code, _ := restDo(t, hc, "DELETE", url+"/web", nil); code != 403 {
		t.Fatalf("delete is not granted: %d", code)
	}
	if code, _ := restDo(t, hc, "GET", s.URL+"/api/v1/namespaces/kube-system/pods", nil); code != 403 {
		t.Fatalf("kube-system is not granted: %d", code)
	}
}

func TestAuthKubeletReadsOnlyItsOwnPods(t *testing.T) {
	s := apiservertest.StartSecure(t)
	ctx := ctxFor(t)
	admin := client.Pods(s.Conn)
	for name, node := range map[string]string{"mine": "node-1", "theirs": "node-2"} {
		p := pod(name, nil)
		p.Spec.NodeName = node
		if _, err := admin.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	kubelet := client.Pods(s.Dial(t, s.NodeCredentials("node-1")))
	if _, err := kubelet.Get(ctx, "default", "mine"); err != nil {
		t.Fatalf("own pod: %v", err)
	}
	_, err := kubelet.Get(ctx, "default", "theirs")
	want := `pods "theirs" is forbidden: User "system:node:node-1" cannot get resource "pods" in API group "" in the namespace "default": no relationship found between node 'node-1' and this object`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("another node's pod: %v\nwant %s", err, want)
	}
	if _, _, err := kubelet.List(ctx, &metav1.ListRequest{}); !apierrors.IsForbidden(err) {
		t.Fatalf("list of all pods: %v", err)
	}
	own, _, err := kubelet.List(ctx, &metav1.ListRequest{FieldSelector: "spec.nodeName=node-1"})
	if err != nil || len(own) != 1 || own[0].GetMetadata().GetName() != "mine" {
		t.Fatalf("list by field selector: %v %v", own, err)
	}
	w, err := kubelet.Watch(ctx, &metav1.ListRequest{FieldSelector: "spec.nodeName=node-2"})
	if err == nil {
		ev := next(t, w)
		w.Stop()
		if ev.Type != "ERROR" || !apierrors.IsForbidden(ev.Err) {
			t.Fatalf("watch of another node's pods: %v", ev)
		}
	} else if !apierrors.IsForbidden(err) {
		t.Fatalf("watch of another node's pods: %v", err)
	}
	theirs, err := admin.Get(ctx, "default", "theirs")
	if err != nil {
		t.Fatal(err)
	}
	theirs.Status = &corev1.PodStatus{Phase: "Running"}
	if _, err := kubelet.UpdateStatus(ctx, theirs); !apierrors.IsForbidden(err) {
		t.Fatalf("status of another node's pod: %v", err)
	}
	mine, _ := admin.Get(ctx, "default", "mine")
	mine.Status = &corev1.PodStatus{Phase: "Running"}
	if _, err := kubelet.UpdateStatus(ctx, mine); err != nil {
		t.Fatalf("status of own pod: %v", err)
	}
}

func TestAuthServiceAccountToken(t *testing.T) {
	s := apiservertest.StartSecure(t)
	ctx := ctxFor(t)
	sa, err := client.For[*corev1.ServiceAccount](s.Conn).Create(ctx, &corev1.ServiceAccount{Metadata: &metav1.ObjectMeta{Namespace: "default", Name: "builder"}})
	if err != nil {
		t.Fatal(err)
	}
	token := s.ServiceAccountToken(t, "default", "builder", sa.GetMetadata().GetUid(), time.Hour)
	hc := s.HTTPClientWith(t, s.TokenCredentials(token))
	url := s.URL + "/api/v1/namespaces/default/pods"
	code, st := restDo(t, hc, "GET", url, nil)
	want := `pods is forbidden: User "system:serviceaccount:default:builder" cannot list resource "pods" in API group "" in the namespace "default"`
	if code != 403 || st["message"] != want {
		t.Fatalf("token without a binding: %d %v", code, st)
	}
	if _, err := client.For[*rbacv1.RoleBinding](s.Conn).Create(ctx, &rbacv1.RoleBinding{
		Metadata: &metav1.ObjectMeta{Namespace: "default", Name: "builder-view"},
		Subjects: []*rbacv1.Subject{{Kind: "ServiceAccount", Name: "builder", Namespace: "default"}},
		RoleRef:  &rbacv1.RoleRef{ApiGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
	}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for code, _ = restDo(t, hc, "GET", url, nil); code != 200; code, _ = restDo(t, hc, "GET", url, nil) {
		if time.Now().After(deadline) {
			t.Fatalf("token after the binding: %d", code)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The same token over gRPC.
	if _, _, err := client.Pods(s.Dial(t, s.TokenCredentials(token))).List(ctx, &metav1.ListRequest{Namespace: "default"}); err != nil {
		t.Fatalf("token over gRPC: %v", err)
	}
	// A token for an account that does not exist is refused outright.
	ghost := s.ServiceAccountToken(t, "default", "ghost", "uid-x", time.Hour)
	if code, _ := restDo(t, s.HTTPClientWith(t, s.TokenCredentials(ghost)), "GET", url, nil); code != 401 {
		t.Fatalf("token of a missing account: %d", code)
	}
}

func TestAuthForgedUserMetadataIsIgnored(t *testing.T) {
	s := apiservertest.StartSecure(t)
	forged := `fake:{"name":"kubernetes-admin","groups":["system:masters"]}`
	for name, hc := range map[string]*http.Client{"anonymous": s.HTTPClient(), "alice": s.HTTPClientWith(t, s.Credentials(t, "alice"))} {
		req, _ := http.NewRequest("GET", s.URL+"/api/v1/namespaces/default/pods", nil)
		req.Header.Set("Grpc-Metadata-X-Podline-Authenticated-User", forged)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		code, _ := statusOf(t, resp)
		if code != 401 && code != 403 {
			t.Fatalf("%s with a forged user header: %d", name, code)
		}
	}
}

func TestAuthBootstrapPolicyAndComponents(t *testing.T) {
	s := apiservertest.StartSecure(t)
	ctx := ctxFor(t)
	roles, _, err := client.For[*rbacv1.ClusterRole](s.Conn).List(ctx, &metav1.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range roles {
		names = append(names, r.GetMetadata().GetName())
	}
	for _, want := range []string{"cluster-admin", "system:kube-scheduler", "system:kube-controller-manager", "system:node", "system:basic-user", "system:discovery", "system:public-info-viewer"} {
		if !strings.Contains(strings.Join(names, ","), want) {
			t.Errorf("bootstrap ClusterRole %s missing from %v", want, names)
		}
	}
	sched := s.Dial(t, client.Credentials{Kubeconfig: s.PKI + "/kubeconfigs/scheduler.conf"})
	if _, _, err := client.Pods(sched).List(ctx, &metav1.ListRequest{}); err != nil {
		t.Fatalf("scheduler lists pods: %v", err)
	}
	p := pod("web", nil)
	if _, err := client.Pods(sched).Create(ctx, p); !apierrors.IsForbidden(err) {
		t.Fatalf("scheduler creates pods: %v", err)
	}
	kcm := s.Dial(t, client.Credentials{Kubeconfig: s.PKI + "/kubeconfigs/controller-manager.conf"})
	if _, err := client.Pods(kcm).Create(ctx, p); err != nil {
		t.Fatalf("controller-manager creates pods: %v", err)
	}
	// gRPC on the REST port authenticates the same way.
	restGRPC := client.Pods(s.DialAddr(t, strings.TrimPrefix(s.URL, "https://"), s.Credentials(t, "alice")))
	if _, err := restGRPC.Get(ctx, "default", "web"); !apierrors.IsForbidden(err) {
		t.Fatalf("alice over gRPC on the REST port: %v", err)
	}
}

// A kubelet looks its mirror Pods up by name: one that does not exist is
// a 404, as the kubelet expects, not a 403.
func TestAuthKubeletGetsNotFoundForMissingPods(t *testing.T) {
	s := apiservertest.StartSecure(t)
	kubelet := client.Pods(s.Dial(t, s.NodeCredentials("node-1")))
	if _, err := kubelet.Get(ctxFor(t), "kube-system", "etcd-node-1"); !apierrors.IsNotFound(err) {
		t.Fatalf("missing mirror pod: %v", err)
	}
}

// kubectl --as: an administrator acts as another user and gets that
// user's answers; a user without the impersonate verb is refused.
func TestAuthImpersonation(t *testing.T) {
	s := apiservertest.StartSecure(t)
	admin := s.HTTPClientWith(t, client.Credentials{Kubeconfig: s.PKI + "/kubeconfig"})
	as := func(hc *http.Client, user string, groups ...string) (int, map[string]any) {
		req, _ := http.NewRequest("GET", s.URL+"/api/v1/namespaces/default/pods", nil)
		req.Header.Set("Impersonate-User", user)
		for _, g := range groups {
			req.Header.Add("Impersonate-Group", g)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return statusOf(t, resp)
	}
	code, st := as(admin, "alice")
	if code != 403 || st["message"] != `pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"` {
		t.Fatalf("admin as alice: %d %v", code, st)
	}
	if code, st := as(admin, "bob", "system:masters"); code != 200 {
		t.Fatalf("admin as bob in system:masters: %d %v", code, st)
	}
	code, st = as(s.HTTPClientWith(t, s.Credentials(t, "alice")), "kubernetes-admin", "system:masters")
	if code != 403 || st["message"] != `users "kubernetes-admin" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope` {
		t.Fatalf("alice as the admin: %d %v", code, st)
	}
	req, _ := http.NewRequest("GET", s.URL+"/api/v1/namespaces/default/pods", nil)
	req.Header.Set("Impersonate-Group", "system:masters")
	resp, err := admin.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := statusOf(t, resp); code != 400 {
		t.Fatalf("a group without a user: %d", code)
	}
}
