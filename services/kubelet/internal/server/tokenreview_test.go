package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"podline.dev/pkg/client"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/pki"
	"podline.dev/pkg/secureserving"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	rbacv1 "podline.dev/proto/rbac/v1"
	"podline.dev/services/apiserver/apiservertest"
)

// A ServiceAccount token calls the kubelet's API: the kubelet asks a real
// apiserver who the token is (TokenReview) and whether that account may
// use nodes/node-1/proxy (SubjectAccessReview), both as system:node:node-1.
func TestServiceAccountTokenThroughTheTokenWebhook(t *testing.T) {
	api := apiservertest.StartSecure(t)
	dir := api.PKI
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := client.For[*corev1.ServiceAccount](api.Conn).Create(ctx, &corev1.ServiceAccount{Metadata: &metav1.ObjectMeta{Namespace: "default", Name: "logreader"}}); err != nil {
		t.Fatal(err)
	}
	adminTLS, err := api.Credentials(t, "root", "system:masters").TLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := httpClient(adminTLS).Post(api.URL+"/api/v1/namespaces/default/serviceaccounts/logreader/token", "application/json",
		strings.NewReader(`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		Status struct {
			Token string `json:"token"`
		} `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("TokenRequest: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()

	kubeletTLS := tlsFor(t, dir, pki.KubeletCertName(testNode))
	cfg := kubeletConfig(t, dir, secureserving.NewSubjectAccessReviews(api.URL, secureserving.HTTPClient(kubeletTLS)))
	cfg.Tokens = secureserving.NewCachedTokenAuthenticator(secureserving.NewTokenReviews(api.URL, secureserving.HTTPClient(kubeletTLS)), clock.Real{}, DefaultTokenCacheTTL)
	url, _, _ := setupWith(t, cfg)
	withToken := func(token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url+"/containerLogs/default/web/c?tailLines=1", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := httpClient(tlsFor(t, dir, "")).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = io.Copy(&b, resp.Body)
		return resp.StatusCode, b.String()
	}

	if code, body := withToken(tr.Status.Token); code != http.StatusForbidden ||
		body != "Forbidden (user=system:serviceaccount:default:logreader, verb=get, resource=nodes, subresource(s)=[proxy])\n" {
		t.Fatalf("an account without a binding: %d %q", code, body)
	}
	if code, body := withToken("not-a-token"); code != http.StatusUnauthorized {
		t.Fatalf("a token nobody issued: %d %q", code, body)
	}
	if _, err := client.For[*rbacv1.ClusterRole](api.Conn).Create(ctx, &rbacv1.ClusterRole{
		Metadata: &metav1.ObjectMeta{Name: "node-log-reader"},
		Rules:    []*rbacv1.PolicyRule{{Verbs: []string{"get"}, ApiGroups: []string{""}, Resources: []string{"nodes/proxy"}}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.For[*rbacv1.ClusterRoleBinding](api.Conn).Create(ctx, &rbacv1.ClusterRoleBinding{
		Metadata: &metav1.ObjectMeta{Name: "logreader-reads-node-logs"},
		RoleRef:  &rbacv1.RoleRef{ApiGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "node-log-reader"},
		Subjects: []*rbacv1.Subject{{Kind: "ServiceAccount", Name: "logreader", Namespace: "default"}},
	}); err != nil {
		t.Fatal(err)
	}
	var code int
	var body string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if code, body = withToken(tr.Status.Token); code == http.StatusOK {
			break
		}
	}
	if code != http.StatusOK || body != "line 3\n" {
		t.Fatalf("the bound account: %d %q", code, body)
	}

	// Without the webhook, a bearer token is not a credential.
	cfg.Tokens = nil
	url, _, _ = setupWith(t, cfg)
	if code, body := withToken(tr.Status.Token); code != http.StatusUnauthorized {
		t.Fatalf("no token webhook: %d %q", code, body)
	}
}
