package test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/watchcache/internal/replica"
)

// testCA issues certificates for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

func (ca *testCA) issue(t *testing.T, subject pkix.Name, server bool) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: subject,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// A replica serving TLS with a client CA serves the components it admits
// and refuses other users with 403.
func TestReplicaServesAdmittedComponentsOverTLS(t *testing.T) {
	ctx := ctxFor(t)
	n := startNATS(t)
	api := apiservertest.Start(t, apiservertest.WithNATS(n.URL))
	ca := newCA(t)
	serverTLS := &tls.Config{Certificates: []tls.Certificate{ca.issue(t, pkix.Name{CommonName: "watchcache"}, true)},
		ClientCAs: ca.pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	r, err := replica.New(replica.Config{NATSURL: n.URL, Apiserver: api.Conn, Name: "tls",
		ServerOptions: []grpc.ServerOption{grpc.Creds(credentials.NewTLS(serverTLS))},
		Access:        replica.Access{Users: []string{"system:kube-scheduler"}, Groups: []string{"system:nodes"}}})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	wg.Go(func() { r.Run(rctx) })
	wg.Go(func() { _ = r.ServeGRPC(rctx, lis) })
	if err := r.WaitReady(rctx); err != nil {
		t.Fatal(err)
	}
	dial := func(subject pkix.Name) *grpc.ClientConn {
		cfg := &tls.Config{RootCAs: ca.pool, Certificates: []tls.Certificate{ca.issue(t, subject, false)}, MinVersion: tls.VersionTLS12}
		c, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}

	kubelet := client.Pods(dial(pkix.Name{CommonName: "system:node:worker-1", Organization: []string{"system:nodes"}}))
	w, err := kubelet.Watch(ctx, &metav1.ListRequest{})
	if err != nil {
		t.Fatalf("a node's watch through the replica: %v", err)
	}
	w.Stop()
	if _, _, err := client.Secrets(dial(pkix.Name{CommonName: "jane"})).List(ctx, &metav1.ListRequest{}); !apierrors.IsForbidden(err) {
		t.Errorf("jane lists secrets through the replica: err = %v, want 403", err)
	}
}
