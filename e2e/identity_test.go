//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The token a Pod finds at /var/run/secrets/kubernetes.io/serviceaccount
// is a real one from the TokenRequest API: bound to the Pod, an hour and
// 7 s long, with the cluster CA beside it (kube-root-ca.crt). Used as a
// bearer token with that CA, it authenticates as the Pod's account, and it
// stops working once the Pod is deleted.
func TestServiceAccountTokenInPod(t *testing.T) {
	name := fmt.Sprintf("sa-token-%d", time.Now().UnixNano()%1_000_000)
	mustKubectl(t, manifest(t, map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": "default", "labels": map[string]any{"app": name}},
		"spec": map[string]any{
			"terminationGracePeriodSeconds": 1,
			"containers":                    []any{map[string]any{"name": "web", "image": webImage}},
		},
	}), "apply", "-f", "-")
	t.Cleanup(func() { _, _ = kubectl(t, "", "delete", "pod", name, "--ignore-not-found", "--wait=false") })
	p := waitRunning(t, "default", "app="+name, 1, 2*time.Minute)[0]

	const dir = "/var/run/secrets/kubernetes.io/serviceaccount/"
	token := strings.TrimSpace(mustKubectl(t, "", "exec", name, "--", "cat", dir+"token"))
	caPEM := mustKubectl(t, "", "exec", name, "--", "cat", dir+"ca.crt")
	if ns := mustKubectl(t, "", "exec", name, "--", "cat", dir+"namespace"); ns != "default" {
		t.Fatalf("namespace file %q", ns)
	}
	clusterCA, err := os.ReadFile(filepath.Join(root, ".podline", "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(caPEM) != strings.TrimSpace(string(clusterCA)) {
		t.Fatalf("ca.crt in the pod is not the cluster CA:\n%s", caPEM)
	}

	claims := jwtClaims(t, token)
	k8s := claims.Kubernetes
	if claims.Sub != "system:serviceaccount:default:default" || k8s.Namespace != "default" ||
		k8s.Pod.Name != name || k8s.Pod.UID != p.Metadata.UID || k8s.Node.Name != p.Spec.NodeName ||
		claims.Exp-claims.Iat != 3607 || claims.Jti == "" {
		t.Fatalf("token claims %+v, pod %s uid %s on %s", claims, name, p.Metadata.UID, p.Spec.NodeName)
	}

	// The token, as the Pod would use it: a bearer token to the apiserver,
	// whose certificate the Pod's ca.crt verifies.
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(caPEM)) {
		t.Fatal("no certificate in the pod's ca.crt")
	}
	asPod := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	whoami := func() (int, selfSubjectReview) {
		req, _ := http.NewRequest(http.MethodPost, apiserverURL+"/apis/authentication.k8s.io/v1/selfsubjectreviews",
			strings.NewReader(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := asPod.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r selfSubjectReview
		_ = json.NewDecoder(resp.Body).Decode(&r)
		return resp.StatusCode, r
	}
	code, review := whoami()
	ui := review.Status.UserInfo
	if code != http.StatusCreated || ui.Username != "system:serviceaccount:default:default" ||
		strings.Join(ui.Extra["authentication.kubernetes.io/pod-name"], "") != name ||
		!strings.Contains(strings.Join(ui.Groups, ","), "system:serviceaccounts:default") {
		t.Fatalf("the pod's token: %d %+v", code, ui)
	}

	// Bound to the Pod: once the Pod is gone, so is the token.
	mustKubectl(t, "", "delete", "pod", name, "--wait=true", "--timeout=90s")
	eventually(t, 30*time.Second, "the deleted pod's token refused", func() error {
		if code, review := whoami(); code != http.StatusUnauthorized {
			return fmt.Errorf("%d %+v", code, review.Status.UserInfo)
		}
		return nil
	})
}

type selfSubjectReview struct {
	Status struct {
		UserInfo struct {
			Username string              `json:"username"`
			Groups   []string            `json:"groups"`
			Extra    map[string][]string `json:"extra"`
		} `json:"userInfo"`
	} `json:"status"`
}

type tokenClaims struct {
	Sub        string `json:"sub"`
	Iat        int64  `json:"iat"`
	Exp        int64  `json:"exp"`
	Jti        string `json:"jti"`
	Kubernetes struct {
		Namespace string `json:"namespace"`
		Pod       struct {
			Name string `json:"name"`
			UID  string `json:"uid"`
		} `json:"pod"`
		Node struct {
			Name string `json:"name"`
		} `json:"node"`
	} `json:"kubernetes.io"`
}

// jwtClaims decodes a JWT's payload (its signature is the apiserver's to
// check).
func jwtClaims(t *testing.T, token string) tokenClaims {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[2] == "" {
		t.Fatalf("not a signed JWT: %q", token)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c tokenClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// After a `kubectl apply`, the apiserver's audit log (its standard output
// in compose) has the create with the admin's name, the verb, the answer's
// code and the trace id of the request (the one stamped on the object).
func TestAuditLogRecordsApply(t *testing.T) {
	name := fmt.Sprintf("audited-%d", time.Now().UnixNano()%1_000_000)
	since := time.Now().Add(-2 * time.Second).UTC().Format(time.RFC3339)
	mustKubectl(t, manifest(t, map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"data":     map[string]any{"secret-ish": "not in the log"},
	}), "apply", "-f", "-")
	t.Cleanup(func() { _, _ = kubectl(t, "", "delete", "configmap", name, "--ignore-not-found") })
	var cm struct {
		Metadata meta `json:"metadata"`
	}
	getJSON(t, "/api/v1/namespaces/default/configmaps/"+name, &cm)
	tp := strings.Split(cm.Metadata.Annotations["podline.dev/traceparent"], "-")
	if len(tp) != 4 {
		t.Fatalf("traceparent annotation %q", cm.Metadata.Annotations["podline.dev/traceparent"])
	}
	traceID := tp[1]

	id := strings.TrimSpace(mustCompose(t, "ps", "-q", "apiserver"))
	var line string
	eventually(t, 10*time.Second, "the audit event of the apply", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := run(ctx, "", "docker", "logs", "--since", since, id)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(strings.NewReader(out))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if l := sc.Text(); strings.Contains(l, `"audit.k8s.io/v1"`) && strings.Contains(l, `"name":"`+name+`"`) && strings.Contains(l, `"verb":"create"`) {
				line = l
				return nil
			}
		}
		return fmt.Errorf("no create of configmap %s in the audit log since %s", name, since)
	})
	var ev struct {
		Level string `json:"level"`
		Stage string `json:"stage"`
		Verb  string `json:"verb"`
		User  struct {
			Username string `json:"username"`
		} `json:"user"`
		ObjectRef struct {
			Resource, Namespace, Name string
		} `json:"objectRef"`
		ResponseStatus struct {
			Code int `json:"code"`
		} `json:"responseStatus"`
		RequestObject json.RawMessage `json:"requestObject"`
		TraceID       string          `json:"traceID"`
		Latency       string          `json:"latency"`
	}
	if err := json.Unmarshal([]byte(line), &ev); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	if ev.User.Username != "kubernetes-admin" || ev.Verb != "create" || ev.ResponseStatus.Code != http.StatusCreated ||
		ev.TraceID != traceID || ev.Stage != "ResponseComplete" || ev.Level != "Metadata" ||
		ev.ObjectRef.Resource != "configmaps" || ev.ObjectRef.Namespace != "default" || ev.Latency == "" {
		t.Fatalf("audit event %+v (trace %s)\n%s", ev, traceID, line)
	}
	if len(ev.RequestObject) != 0 || strings.Contains(line, "not in the log") {
		t.Fatalf("a ConfigMap's data was logged: %s", line)
	}
}

// A ServiceAccount token calls a kubelet's API (:10250, from its node):
// the kubelet asks the apiserver who the token is (TokenReview) and
// whether that account may get nodes/proxy (SubjectAccessReview).
func TestServiceAccountTokenCallsTheKubelet(t *testing.T) {
	name := fmt.Sprintf("kubelet-reader-%d", time.Now().UnixNano()%1_000_000)
	objs := []map[string]any{
		{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": name, "namespace": "default"}},
		{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": name},
			"rules": []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"nodes/proxy"}, "verbs": []any{"get"}}}},
		{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": map[string]any{"name": name},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
			"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": name, "namespace": "default"}}},
		{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": name, "namespace": "default", "labels": map[string]any{"app": name}},
			"spec": map[string]any{"serviceAccountName": name, "terminationGracePeriodSeconds": 1,
				"containers": []any{map[string]any{"name": "web", "image": webImage}}}},
	}
	for _, o := range objs {
		mustKubectl(t, manifest(t, o), "apply", "-f", "-")
	}
	t.Cleanup(func() {
		_, _ = kubectl(t, "", "delete", "pod,serviceaccount", name, "--ignore-not-found", "--wait=false")
		_, _ = kubectl(t, "", "delete", "clusterrolebinding,clusterrole", name, "--ignore-not-found")
	})
	p := waitRunning(t, "default", "app="+name, 1, 2*time.Minute)[0]
	token := strings.TrimSpace(mustKubectl(t, "", "exec", name, "--", "cat", "/var/run/secrets/kubernetes.io/serviceaccount/token"))
	other := strings.TrimSpace(mustKubectl(t, "", "create", "token", "default"))

	logs := "https://127.0.0.1:10250/containerLogs/default/" + name + "/web"
	call := func(token string) (string, error) {
		return inNode(t, p.Spec.NodeName, "busybox", "wget", "--no-check-certificate", "-q", "-O-",
			"--header", "Authorization: Bearer "+token, logs)
	}
	if _, err := call(token); err != nil {
		t.Fatalf("the pod's account, allowed nodes/proxy: %v", err)
	}
	if _, err := call(other); err == nil || !strings.Contains(err.Error(), "403 Forbidden") {
		t.Fatalf("the default account: %v, want 403", err)
	}
	if _, err := call("not-a-token"); err == nil || !strings.Contains(err.Error(), "401 Unauthorized") {
		t.Fatalf("a token nobody issued: %v, want 401", err)
	}
}
