package pki

import (
	"crypto/x509"
	"path/filepath"
	"slices"
	"testing"
)

// The watchcache replicas serve by their compose names and reach the
// apiserver as system:watchcache in system:masters, both signed by the
// cluster CA, each for its one use.
func TestWatchcachePairsServeTheReplicasAndIdentifyThem(t *testing.T) {
	c := newCluster(t)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(c.read(c.pkiPath("ca.crt")))
	serving := c.cert(filepath.Join(WatchcacheDir, "serving"))
	for _, name := range []string{"watchcache", "watchcache-1", "watchcache-2", "localhost", "127.0.0.1"} {
		if _, err := serving.Verify(x509.VerifyOptions{Roots: roots, DNSName: name,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("serving.crt does not serve %s: %v", name, err)
		}
	}
	if _, err := serving.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("serving.crt is also a client certificate")
	}
	client := c.cert(filepath.Join(WatchcacheDir, "client"))
	if _, err := client.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client.crt: %v", err)
	}
	if client.Subject.CommonName != WatchcacheUser || !slices.Equal(client.Subject.Organization, []string{MastersGroup}) {
		t.Errorf("client.crt is CN %q O %q, want %q in %q", client.Subject.CommonName, client.Subject.Organization, WatchcacheUser, MastersGroup)
	}
}
