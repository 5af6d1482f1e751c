package pki

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// cluster is one Generate run's output directory in a test.
type cluster struct {
	t    *testing.T
	root string
}

// newCluster runs Generate into a fresh temporary directory.
func newCluster(t *testing.T, opts ...Option) cluster {
	t.Helper()
	c := cluster{t: t, root: t.TempDir()}
	if _, err := Generate(append(c.options(), opts...)...); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	return c
}

// options point every output of Generate into the cluster's directory.
func (c cluster) options() []Option {
	return []Option{
		WithDir(filepath.Join(c.root, "pki")),
		WithAdminKubeconfig(filepath.Join(c.root, "kubeconfig")),
		WithKubeconfigDir(filepath.Join(c.root, "kubeconfigs")),
	}
}

// generate runs Generate again over the same directory.
func (c cluster) generate(opts ...Option) (Report, error) {
	return Generate(append(c.options(), opts...)...)
}

func (c cluster) pkiPath(name string) string { return filepath.Join(c.root, "pki", name) }

func (c cluster) read(path string) []byte {
	c.t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		c.t.Fatal(err)
	}
	return data
}

// cert parses pki/<name>.crt.
func (c cluster) cert(name string) *x509.Certificate {
	c.t.Helper()
	cert, err := decodeCert(c.read(c.pkiPath(name + ".crt")))
	if err != nil {
		c.t.Fatalf("%s.crt: %v", name, err)
	}
	return cert
}

// snapshot returns every file under the cluster's directory with its
// contents and modification time.
func (c cluster) snapshot() map[string]string {
	c.t.Helper()
	files := map[string]string{}
	err := filepath.Walk(c.root, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		files[path] = info.ModTime().Format(time.RFC3339Nano) + "\n" + string(c.read(path))
		return nil
	})
	if err != nil {
		c.t.Fatal(err)
	}
	return files
}

// fixedClock returns a clock stopped at t.
func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }
