package test

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/pki"
	"podline.dev/pkg/secureserving"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/watchcache/internal/replica"
)

// counting counts the reviews that reach the apiserver.
type counting struct {
	next  secureserving.Authorizer
	calls atomic.Int64
}

func (c *counting) Authorize(ctx context.Context, a secureserving.Attributes) (secureserving.Decision, error) {
	c.calls.Add(1)
	return c.next.Authorize(ctx, a)
}

// secureReplica is a replica as compose runs it: TLS with the serving
// pair of `make certs`, client certificates of the cluster CA, each read
// authorized by the apiserver with a SubjectAccessReview.
type secureReplica struct {
	addr    string
	reviews *counting
	authz   secureserving.Authorizer
	r       *replica.Replica
	api     *apiservertest.Server
}

func startSecureReplica(t *testing.T) *secureReplica {
	t.Helper()
	n := startNATS(t)
	api := apiservertest.StartSecure(t, apiservertest.WithNATS(n.URL))
	dir := filepath.Join(api.PKI, pki.WatchcacheDir)
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "serving.crt"), filepath.Join(dir, "serving.key"))
	if err != nil {
		t.Fatal(err)
	}
	ca, err := pki.LoadCertPool(filepath.Join(api.PKI, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	self := client.Credentials{CAFile: filepath.Join(api.PKI, "ca.crt"),
		CertFile: filepath.Join(dir, "client.crt"), KeyFile: filepath.Join(dir, "client.key")}
	reviews := &counting{next: secureserving.NewSubjectAccessReviews(api.URL, api.HTTPClientWith(t, self))}
	authz := secureserving.NewCachedAuthorizer(reviews, clock.Real{}, time.Minute, time.Minute)
	serverTLS := &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: ca,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	r, err := replica.New(replica.Config{NATSURL: n.URL, Apiserver: api.Dial(t, self), Name: "tls",
		ServerOptions: []grpc.ServerOption{grpc.Creds(credentials.NewTLS(serverTLS))},
		Authorizer:    authz})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	wg.Go(func() { r.Run(ctx) })
	wg.Go(func() { _ = r.ServeGRPC(ctx, lis) })
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if err := r.WaitReady(wctx); err != nil {
		t.Fatal(err)
	}
	return &secureReplica{addr: lis.Addr().String(), reviews: reviews, authz: authz, r: r, api: api}
}

func (s *secureReplica) dial(t *testing.T, c client.Credentials) *grpc.ClientConn {
	t.Helper()
	return s.api.DialAddr(t, s.addr, c)
}

// Each List and Watch through a replica is authorized as the apiserver
// authorizes it: a kubelet watches the pods of its own node and no others
// (the Node authorizer's field selector rule), a user without RBAC is
// refused, and the 403 reads as the apiserver's own for the same request.
// Decisions are kept: the same watch again costs no review.
func TestReplicaAuthorizesEachReadAsTheApiserver(t *testing.T) {
	ctx := ctxFor(t)
	s := startSecureReplica(t)
	node1 := s.api.NodeCredentials("node-1")
	jane := s.api.Credentials(t, "jane", "developers")

	viaReplica := client.Pods(s.dial(t, node1))
	own := &metav1.ListRequest{FieldSelector: "spec.nodeName=node-1"}
	w, err := viaReplica.Watch(ctx, own)
	if err != nil {
		t.Fatalf("node-1 watches its own pods through the replica: %v", err)
	}
	w.Stop()
	before := s.reviews.calls.Load()
	if w, err = viaReplica.Watch(ctx, own); err != nil {
		t.Fatalf("node-1's second watch: %v", err)
	}
	w.Stop()
	if _, _, err := viaReplica.List(ctx, &metav1.ListRequest{FieldSelector: "spec.nodeName=node-1", ResourceVersion: "0"}); err != nil {
		t.Fatalf("node-1 lists its own pods through the replica: %v", err)
	}
	if got := s.reviews.calls.Load() - before; got != 1 {
		t.Errorf("a repeated watch and a list cost %d reviews, want 1 (the list's)", got)
	}

	for _, tc := range []struct {
		name  string
		creds client.Credentials
		call  func(conn *grpc.ClientConn) error
	}{
		{"node-1 watches every pod", node1, func(c *grpc.ClientConn) error {
			_, err := client.Pods(c).Watch(ctx, &metav1.ListRequest{})
			return err
		}},
		{"node-1 watches node-2's pods", node1, func(c *grpc.ClientConn) error {
			_, err := client.Pods(c).Watch(ctx, &metav1.ListRequest{FieldSelector: "spec.nodeName=node-2"})
			return err
		}},
		{"jane lists secrets in default", jane, func(c *grpc.ClientConn) error {
			_, _, err := client.Secrets(c).List(ctx, &metav1.ListRequest{Namespace: "default"})
			return err
		}},
		{"jane watches deployments", jane, func(c *grpc.ClientConn) error {
			_, err := client.Deployments(c).Watch(ctx, &metav1.ListRequest{})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			replicaErr := tc.call(s.dial(t, tc.creds))
			directErr := tc.call(s.api.Dial(t, tc.creds))
			if !apierrors.IsForbidden(replicaErr) || !apierrors.IsForbidden(directErr) {
				t.Fatalf("replica: %v; apiserver: %v; want 403 from both", replicaErr, directErr)
			}
			if r, d := apierrors.FromError(replicaErr).Status().GetMessage(), apierrors.FromError(directErr).Status().GetMessage(); r != d {
				t.Errorf("403 message\nreplica:   %s\napiserver: %s", r, d)
			}
		})
	}
}

// /metrics and /debug/pprof/, behind the secure port as the command
// serves them, answer a client the apiserver allows to get them (an
// administrator), not a kubelet or an anonymous client; the health paths
// answer anyone.
func TestReplicaMetricsNeedAnAuthorizedClient(t *testing.T) {
	s := startSecureReplica(t)
	dir := filepath.Join(s.api.PKI, pki.WatchcacheDir)
	serving, err := secureserving.ServingTLS(filepath.Join(dir, "serving.crt"), filepath.Join(dir, "serving.key"))
	if err != nil {
		t.Fatal(err)
	}
	ca, err := pki.LoadCertPool(filepath.Join(s.api.PKI, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	port := secureserving.Config{Authenticator: secureserving.Authenticator{ClientCA: ca}, Authorizer: s.authz,
		AlwaysAllowPaths: secureserving.DefaultAlwaysAllowPaths}
	srv := httptest.NewUnstartedServer(port.Handler(s.r.MetricsHandler()))
	srv.TLS = serving
	srv.StartTLS()
	defer srv.Close()
	admin := client.Credentials{Kubeconfig: filepath.Join(s.api.PKI, "kubeconfig")}
	anonymous := client.Credentials{CAFile: filepath.Join(s.api.PKI, "ca.crt")}
	for _, tc := range []struct {
		name  string
		creds client.Credentials
		path  string
		want  int
	}{
		{"admin metrics", admin, "/metrics", http.StatusOK},
		{"admin pprof", admin, "/debug/pprof/", http.StatusOK},
		{"kubelet metrics", s.api.NodeCredentials("node-1"), "/metrics", http.StatusForbidden},
		{"anonymous metrics", anonymous, "/metrics", http.StatusUnauthorized},
		{"anonymous readyz", anonymous, "/readyz", http.StatusOK},
	} {
		resp, err := s.api.HTTPClientWith(t, tc.creds).Get(srv.URL + tc.path)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
}
