package apiservertest

import (
	"crypto/tls"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"

	"podline.dev/pkg/client"
	"podline.dev/pkg/pki"
	"podline.dev/services/apiserver/internal/audit"
	"podline.dev/services/apiserver/internal/authn"
	"podline.dev/services/apiserver/internal/server"
)

// StartSecure runs etcd and an apiserver with the real request chain: TLS
// with certificates made by pkg/pki in a temporary directory (s.PKI),
// x509 client-certificate and ServiceAccount-token authentication, and
// Node and RBAC authorization with the bootstrap policy. s.Conn is a
// gRPC connection as kubernetes-admin (system:masters).
func StartSecure(t testing.TB, opts ...Option) *Server {
	t.Helper()
	return StartSecureOn(t, StartEtcd(t), opts...)
}

// StartSecureOn is StartSecure on an existing etcd (a restart keeps the
// stored objects; each call makes new certificates).
func StartSecureOn(t testing.TB, etcd *Etcd, opts ...Option) *Server {
	t.Helper()
	dir := t.TempDir()
	if _, err := pki.Generate(pki.WithDir(dir), pki.WithKubeconfigDir(filepath.Join(dir, "kubeconfigs")),
		pki.WithAdminKubeconfig(filepath.Join(dir, "kubeconfig")), pki.WithNodes("node-1", "node-2"),
		pki.WithEtcdMembers("etcd-1")); err != nil {
		t.Fatalf("pki: %v", err)
	}
	return start(t, etcd, dir, opts...)
}

// secure turns on TLS and the authentication and authorization chain.
func secure(t testing.TB, cfg *server.Config, dir string) {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "apiserver.crt"), filepath.Join(dir, "apiserver.key"))
	if err != nil {
		t.Fatal(err)
	}
	ca, err := pki.LoadCertPool(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	saKey, err := pki.LoadPublicKey(filepath.Join(dir, pki.ServiceAccountPub))
	if err != nil {
		t.Fatal(err)
	}
	saSigningKey, err := pki.LoadKey(filepath.Join(dir, pki.ServiceAccountKey))
	if err != nil {
		t.Fatal(err)
	}
	cfg.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	kubeletClient, err := tls.LoadX509KeyPair(filepath.Join(dir, "apiserver-kubelet-client.crt"), filepath.Join(dir, "apiserver-kubelet-client.key"))
	if err != nil {
		t.Fatal(err)
	}
	// Kubelets are reached as compose's apiserver reaches them: its kubelet
	// client certificate, their serving certificates verified by the CA.
	cfg.Kubelet.TLS = &tls.Config{Certificates: []tls.Certificate{kubeletClient}, RootCAs: ca, MinVersion: tls.VersionTLS12}
	cfg.Auth = &server.AuthConfig{
		ClientCA:                 ca,
		ServiceAccountKey:        saKey,
		ServiceAccountSigningKey: saSigningKey,
		AuthorizationModes:       []string{server.ModeNode, server.ModeRBAC},
	}
}

func adminCredentials(dir string) client.Credentials {
	return client.Credentials{Kubeconfig: filepath.Join(dir, "kubeconfig")}
}

func dialOptions(t testing.TB, c client.Credentials) []grpc.DialOption {
	t.Helper()
	opts, err := c.DialOptions()
	if err != nil {
		t.Fatal(err)
	}
	return opts
}

// Credentials returns TLS credentials of a new client certificate for
// user in groups, signed by the cluster CA (the Kubernetes way to add a
// user). Node certificates for node-1 and node-2 exist already: see
// NodeCredentials.
func (s *Server) Credentials(t testing.TB, user string, groups ...string) client.Credentials {
	t.Helper()
	crt, key, err := pki.IssueClientCert(s.PKI, filepath.Join("users", sanitize(user)), user, groups...)
	if err != nil {
		t.Fatal(err)
	}
	return client.Credentials{CAFile: filepath.Join(s.PKI, "ca.crt"), CertFile: crt, KeyFile: key}
}

// NodeCredentials are the kubelet client certificate of node-1 or node-2.
func (s *Server) NodeCredentials(node string) client.Credentials {
	return client.Credentials{Kubeconfig: filepath.Join(s.PKI, "kubeconfigs", pki.KubeletCertName(node)+".conf")}
}

// TokenCredentials present a bearer token over TLS without a certificate.
func (s *Server) TokenCredentials(token string) client.Credentials {
	return client.Credentials{CAFile: filepath.Join(s.PKI, "ca.crt"), Token: token}
}

// Dial opens a gRPC connection to the native port with c.
func (s *Server) Dial(t testing.TB, c client.Credentials) *grpc.ClientConn {
	t.Helper()
	return s.DialAddr(t, s.Addr, c)
}

// DialAddr opens a gRPC connection to addr (the REST port answers gRPC too) with c.
func (s *Server) DialAddr(t testing.TB, addr string, c client.Credentials) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, dialOptions(t, c)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// HTTPClientWith is a REST client presenting c (certificate or token).
func (s *Server) HTTPClientWith(t testing.TB, c client.Credentials) *http.Client {
	t.Helper()
	hc := s.httpClient(c)
	if c.Token != "" {
		hc.Transport = bearerTransport{token: c.Token, next: hc.Transport}
	}
	return hc
}

func (s *Server) httpClient(c client.Credentials) *http.Client {
	cfg, err := c.TLSConfig()
	if err != nil {
		panic(err) // credentials made by this package always load
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// ServiceAccountToken signs a token for the ServiceAccount namespace/name
// (with its uid) with the server's key, as the TokenRequest API would.
func (s *Server) ServiceAccountToken(t testing.TB, namespace, name, uid string, ttl time.Duration) string {
	t.Helper()
	key, err := pki.LoadKey(filepath.Join(s.PKI, pki.ServiceAccountKey))
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := authn.NewTokenIssuer(key, authn.DefaultIssuer).Issue(
		authn.ServiceAccountRef{Namespace: namespace, Name: name, UID: uid}, []string{authn.DefaultIssuer}, ttl)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// sanitize makes a user name a file name.
func sanitize(user string) string {
	out := []byte(user)
	for i, c := range out {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			out[i] = '-'
		}
	}
	return string(out)
}

// WithAudit writes the audit log to w with policy p.
func WithAudit(w io.Writer, p *audit.Policy) Option {
	return func(c *config) { c.Audit = audit.NewLogger(w, p) }
}
