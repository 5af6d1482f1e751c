package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"podline.dev/pkg/pki"
	"podline.dev/pkg/secureserving"
	"podline.dev/pkg/testenv"
)

// recorder remembers what the server asked its authorizer, and allows
// the users in allow.
type recorder struct {
	mu    sync.Mutex
	asked []secureserving.Attributes
	allow []string
}

func (r *recorder) Authorize(_ context.Context, a secureserving.Attributes) (secureserving.Decision, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, a)
	return secureserving.Decision{Allowed: slices.Contains(r.allow, a.User.Name)}, nil
}

func (r *recorder) setAllow(users ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.allow = users
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.asked)
}

func (r *recorder) last() secureserving.Attributes {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.asked[len(r.asked)-1]
}

func TestRequestsWithoutAcceptedCredentialsGet401(t *testing.T) {
	dir := newPKI(t)
	z := &recorder{allow: []string{pki.APIServerKubeletClientUser}}
	url, _, _ := setupWith(t, kubeletConfig(t, dir, z))
	// A certificate from another cluster's CA proves nothing here.
	other := newPKI(t)
	impostor := tlsFor(t, other, "apiserver-kubelet-client")
	impostor.RootCAs = tlsFor(t, dir, "").RootCAs
	for name, hc := range map[string]*http.Client{
		"no certificate":           httpClient(tlsFor(t, dir, "")),
		"another CA's certificate": httpClient(impostor),
	} {
		for _, path := range []string{"/containerLogs/default/web/c", "/exec/default/web/c?command=true", "/healthz"} {
			code, body := get(t, hc, url+path)
			if code != http.StatusUnauthorized || body != "Unauthorized\n" {
				t.Errorf("%s: GET %s: %d %q, want 401", name, path, code, body)
			}
		}
	}
	if n := z.count(); n != 0 {
		t.Errorf("%d unauthenticated requests reached the authorizer", n)
	}
}

// Authorization asks about a verb on nodes/<node>/proxy for the
// certificate's user and groups; a refusal is the kubelet's 403 text.
func TestAuthorizationIsAVerbOnTheNodesProxySubresource(t *testing.T) {
	dir := newPKI(t)
	if _, _, err := pki.IssueClientCert(dir, "alice", "alice", "devs"); err != nil {
		t.Fatal(err)
	}
	z := &recorder{allow: []string{pki.APIServerKubeletClientUser}}
	url, _, _ := setupWith(t, kubeletConfig(t, dir, z))
	alice := tlsFor(t, dir, "alice")
	for _, c := range []struct {
		method, path, verb string
	}{
		{"GET", "/containerLogs/default/web/c", "get"},
		{"POST", "/exec/default/web/c?command=true", "create"},
		{"POST", "/portForward/default/web", "create"},
		{"GET", "/portForward/default/web", "create"},
	} {
		req, _ := http.NewRequest(c.method, url+c.path, nil)
		resp, err := httpClient(alice).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp)
		want := "Forbidden (user=alice, verb=" + c.verb + ", resource=nodes, subresource(s)=[proxy])\n"
		if resp.StatusCode != http.StatusForbidden || body != want {
			t.Errorf("%s %s: %d %q, want 403 %q", c.method, c.path, resp.StatusCode, body, want)
		}
		got := z.last()
		if got.Verb != c.verb || got.Resource != "nodes" || got.Subresource != "proxy" || got.Name != testNode ||
			got.User.Name != "alice" || !slices.Equal(got.User.Groups, []string{"devs", secureserving.AuthenticatedGroup}) {
			t.Errorf("%s %s asked %+v", c.method, c.path, got)
		}
	}
	// A WebSocket exec is a GET, and still a create: running a command is
	// not a read.
	d := websocket.Dialer{Subprotocols: []string{ProtocolV5}, TLSClientConfig: alice}
	_, resp, err := d.Dial("wss"+strings.TrimPrefix(url, "https")+"/exec/default/web/c?command=sh&stdout=1", nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("WebSocket exec as alice: %v %v", resp, err)
	}
	if got := z.last(); got.Verb != "create" {
		t.Errorf("WebSocket exec asked verb %q, want create", got.Verb)
	}
}

func TestAnonymousRequestsAreAuthorizedAsSystemAnonymous(t *testing.T) {
	dir := newPKI(t)
	z := &recorder{}
	cfg := kubeletConfig(t, dir, z)
	cfg.Anonymous = true
	url, _, _ := setupWith(t, cfg)
	code, body := get(t, httpClient(tlsFor(t, dir, "")), url+"/containerLogs/default/web/c")
	if want := "Forbidden (user=system:anonymous, verb=get, resource=nodes, subresource(s)=[proxy])\n"; code != 403 || body != want {
		t.Fatalf("%d %q, want 403 %q", code, body, want)
	}
	if got := z.last().User; !slices.Equal(got.Groups, []string{secureserving.UnauthenticatedUser}) {
		t.Errorf("anonymous groups %q", got.Groups)
	}
	z.setAllow(secureserving.AnonymousUser)
	if code, body := get(t, httpClient(tlsFor(t, dir, "")), url+"/containerLogs/default/web/c?tailLines=1"); code != 200 || body != "line 3\n" {
		t.Fatalf("allowed anonymous: %d %q", code, body)
	}
}

func TestAuthorizationErrorsAre500(t *testing.T) {
	dir := newPKI(t)
	broken := secureserving.AuthorizerFunc(func(context.Context, secureserving.Attributes) (secureserving.Decision, error) {
		return secureserving.Decision{}, errors.New("apiserver unreachable")
	})
	url, _, _ := setupWith(t, kubeletConfig(t, dir, broken))
	code, body := get(t, httpClient(tlsFor(t, dir, "apiserver-kubelet-client")), url+"/containerLogs/default/web/c")
	if want := "Authorization error (user=kube-apiserver-kubelet-client, verb=get, resource=nodes, subresource=proxy)\n"; code != 500 || body != want {
		t.Fatalf("%d %q, want 500 %q", code, body, want)
	}
}

func TestServeNeedsACertificateAndServesHealthzPlainWhereAsked(t *testing.T) {
	dir := newPKI(t)
	s := New(Config{Addr: "127.0.0.1:0", Authorizer: secureserving.AlwaysAllow}, pods{}, nil, discard)
	if err := s.Serve(context.Background()); !errors.Is(err, ErrNoServingCertificate) {
		t.Fatalf("Serve without a certificate: %v", err)
	}
	cfg := kubeletConfig(t, dir, secureserving.AlwaysAllow)
	cfg.Addr, cfg.HealthzAddr = "127.0.0.1:0", testenv.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(cfg, pods{}, nil, discard).Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	eventually(t, func() bool {
		resp, err := http.Get("http://" + cfg.HealthzAddr + "/healthz")
		return err == nil && readAll(t, resp) == "ok"
	})
	resp, err := http.Get("http://" + cfg.HealthzAddr + "/containerLogs/default/web/c")
	if err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the plain port serves only /healthz: %v %v", resp, err)
	}
	resp.Body.Close()
}

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// eventually polls cond for up to 5 s.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
