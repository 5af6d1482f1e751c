package client

import (
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"podline.dev/pkg/pki"
)

func TestCredentialsFromKubeconfigAndFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := pki.Generate(pki.WithDir(dir), pki.WithKubeconfigDir(filepath.Join(dir, "kc")),
		pki.WithAdminKubeconfig(filepath.Join(dir, "admin.conf")), pki.WithNodes("n1"), pki.WithEtcdMembers("e1")); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]Credentials{
		"kubeconfig": {Kubeconfig: filepath.Join(dir, "kc", "scheduler.conf")},
		"files":      {CAFile: filepath.Join(dir, "ca.crt"), CertFile: filepath.Join(dir, "scheduler.crt"), KeyFile: filepath.Join(dir, "scheduler.key")},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := c.TLSConfig()
			if err != nil {
				t.Fatal(err)
			}
			if cfg.RootCAs == nil || len(cfg.Certificates) != 1 {
				t.Fatalf("roots %v, %d certificates", cfg.RootCAs, len(cfg.Certificates))
			}
			leaf, err := x509.ParseCertificate(cfg.Certificates[0].Certificate[0])
			if err != nil || leaf.Subject.CommonName != "system:kube-scheduler" {
				t.Fatalf("leaf %v, %v", leaf.Subject, err)
			}
			if _, err := c.DialOptions(); err != nil {
				t.Fatal(err)
			}
		})
	}
	bad := filepath.Join(dir, "bad.conf")
	if err := os.WriteFile(bad, []byte("apiVersion: v1\nclusters: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (Credentials{Kubeconfig: bad}).TLSConfig(); !errors.Is(err, ErrNoKubeconfigData) {
		t.Fatalf("err = %v", err)
	}
	if opts, err := (Credentials{}).DialOptions(); err != nil || len(opts) != 1 {
		t.Fatalf("plain text: %v, %v", opts, err)
	}
}
