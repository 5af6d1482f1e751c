package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"podline.dev/pkg/client"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/pki"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	rbacv1 "podline.dev/proto/rbac/v1"
	"podline.dev/services/apiserver/apiservertest"
)

// tokenCounter knows the tokens in users, fails while failing is set, and
// counts the questions that reach it.
type tokenCounter struct {
	calls   int
	users   map[string]string
	failing bool
}

func (c *tokenCounter) AuthenticateToken(_ context.Context, token string) (User, bool, error) {
	c.calls++
	if c.failing {
		return User{}, false, errors.New("apiserver unreachable")
	}
	name, ok := c.users[token]
	return User{Name: name}, ok, nil
}

func TestCachedTokenAuthenticatorRemembersAnswersForTwoMinutes(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	next := &tokenCounter{users: map[string]string{"good": "system:serviceaccount:default:default"}}
	c := NewCachedTokenAuthenticator(next, clk, DefaultTokenCacheTTL)
	steps := []struct {
		step      time.Duration
		token     string
		failing   bool
		wantOK    bool
		wantErr   bool
		wantCalls int
	}{
		{step: 0, token: "good", wantOK: true, wantCalls: 1},
		{step: time.Minute, token: "good", wantOK: true, wantCalls: 1},
		{step: 0, token: "bad", wantCalls: 2},
		{step: 59 * time.Second, token: "bad", wantCalls: 2}, // a refusal is kept as long
		{step: time.Second, token: "good", wantOK: true, wantCalls: 3},
		{step: 0, token: "other", failing: true, wantErr: true, wantCalls: 4},
		{step: 0, token: "other", wantCalls: 5}, // errors are not kept
	}
	for i, s := range steps {
		clk.Step(s.step)
		next.failing = s.failing
		u, ok, err := c.AuthenticateToken(context.Background(), s.token)
		if ok != s.wantOK || (err != nil) != s.wantErr || next.calls != s.wantCalls || (ok && u.Name != next.users[s.token]) {
			t.Fatalf("step %d (%s): %v %v %v after %d calls; want ok=%v err=%v after %d", i, s.token, u, ok, err, next.calls, s.wantOK, s.wantErr, s.wantCalls)
		}
	}
}

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
	cfg := kubeletConfig(t, dir, NewSubjectAccessReviews(api.URL, kubeletTLS))
	cfg.Tokens = NewCachedTokenAuthenticator(NewTokenReviews(api.URL, kubeletTLS), clock.Real{}, DefaultTokenCacheTTL)
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
