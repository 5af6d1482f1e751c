package pki

import (
	"bytes"
	"crypto/x509"
	"path/filepath"
	"testing"
)

// The registry and Jaeger serve TLS by the names compose and image
// references reach them by, verified with the cluster CA; each etcd member
// holds that CA beside its own so that its spans go to Jaeger over TLS.
func TestRegistryAndJaegerServeByTheirNames(t *testing.T) {
	c := newCluster(t)
	roots := c.pool(ClusterCA)
	for pair, names := range map[string][]string{
		filepath.Join(RegistryDir, "server"): {"registry.podline", "registry", "localhost", "127.0.0.1"},
		filepath.Join(JaegerDir, "server"):   {"jaeger", "localhost", "127.0.0.1"},
	} {
		crt := c.cert(pair)
		for _, name := range names {
			if _, err := crt.Verify(x509.VerifyOptions{Roots: roots, DNSName: name,
				KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
				t.Errorf("%s does not serve %s: %v", pair, name, err)
			}
		}
		if _, err := crt.Verify(x509.VerifyOptions{Roots: roots, DNSName: "apiserver"}); err == nil {
			t.Errorf("%s serves the name apiserver", pair)
		}
		if _, err := crt.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
			t.Errorf("%s is also a client certificate", pair)
		}
	}
	for _, m := range []string{"etcd-1", "etcd-2", "etcd-3"} {
		if !bytes.Equal(c.read(c.pkiPath(filepath.Join(EtcdMemberDir(m), EtcdOTLPCA))), c.read(c.pkiPath("ca.crt"))) {
			t.Errorf("%s/%s is not the cluster CA", m, EtcdOTLPCA)
		}
	}
}
