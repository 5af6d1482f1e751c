package pki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestIssueClientCertIsSignedByTheClusterCA(t *testing.T) {
	dir := t.TempDir()
	if _, err := Generate(WithDir(dir), WithKubeconfigDir(filepath.Join(dir, "kc")),
		WithAdminKubeconfig(filepath.Join(dir, "kubeconfig")), WithNodes("n1"), WithEtcdMembers("e1")); err != nil {
		t.Fatal(err)
	}
	crt, key, err := IssueClientCert(dir, "users/alice", "alice", "devs", "ops")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	pool, err := LoadCertPool(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("verify: %v", err)
	}
	if leaf.Subject.CommonName != "alice" || len(leaf.Subject.Organization) != 2 {
		t.Fatalf("subject = %v", leaf.Subject)
	}
	priv, err := LoadKey(filepath.Join(dir, ServiceAccountKey))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := LoadPublicKey(filepath.Join(dir, ServiceAccountPub))
	if err != nil {
		t.Fatal(err)
	}
	if !priv.PublicKey.Equal(pub) {
		t.Fatal("sa.pub is not sa.key's public half")
	}
}

func TestLoadRejectsFilesWithoutPEM(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junk")
	if err := os.WriteFile(path, []byte("not pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(path); !errors.Is(err, ErrNoPEM) {
		t.Fatalf("LoadKey err = %v", err)
	}
	if _, err := LoadCertPool(path); !errors.Is(err, ErrNoPEM) {
		t.Fatalf("LoadCertPool err = %v", err)
	}
}
