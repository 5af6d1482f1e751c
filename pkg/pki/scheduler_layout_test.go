package pki

import (
	"crypto/x509"
	"path/filepath"
	"testing"
)

// The schedulers' secure port serves by their compose names and on
// loopback, signed by the cluster CA, and the pair is no client identity.
func TestSchedulerServingPairServesBothSchedulers(t *testing.T) {
	c := newCluster(t)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(c.read(c.pkiPath("ca.crt")))
	serving := c.cert(filepath.Join(SchedulerServingDir, "serving"))
	for _, name := range []string{"scheduler-1", "scheduler-2", "localhost", "127.0.0.1"} {
		if _, err := serving.Verify(x509.VerifyOptions{Roots: roots, DNSName: name,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("serving.crt does not serve %s: %v", name, err)
		}
	}
	if _, err := serving.Verify(x509.VerifyOptions{Roots: roots, DNSName: "apiserver",
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
		t.Error("serving.crt also serves the apiserver's name")
	}
	if _, err := serving.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("serving.crt is also a client certificate")
	}
}
