package pki

import (
	"bytes"
	"crypto/x509"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Each node's kubelet directory is mounted into the node as it is: its
// serving pair under kubelet's names and the cluster CA that verifies the
// apiserver's client certificate, and no other node's key.
func TestKubeletServingDirectoriesHoldWhatTheKubeletServesWith(t *testing.T) {
	c := newCluster(t)
	clusterCA := c.read(c.pkiPath("ca.crt"))
	for _, node := range DefaultNodes() {
		t.Run(node, func(t *testing.T) {
			dir := c.pkiPath(KubeletServingDir(node))
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if want := []string{"ca.crt", "kubelet.crt", "kubelet.key"}; !slices.Equal(names, want) {
				t.Errorf("files = %q, want %q", names, want)
			}
			if !bytes.Equal(c.read(filepath.Join(dir, "ca.crt")), clusterCA) {
				t.Error("ca.crt is not the cluster CA")
			}
			roots := x509.NewCertPool()
			roots.AppendCertsFromPEM(clusterCA)
			serving := c.cert(KubeletServingCertName(node))
			if _, err := serving.Verify(x509.VerifyOptions{Roots: roots, DNSName: node,
				KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
				t.Errorf("kubelet.crt does not serve %s: %v", node, err)
			}
			if _, err := serving.Verify(x509.VerifyOptions{Roots: roots,
				KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
				t.Error("kubelet.crt is also a client certificate")
			}
		})
	}
	// The apiserver's kubelet client certificate is what those servers
	// accept: signed by the cluster CA, for client authentication only.
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(clusterCA)
	client := c.cert("apiserver-kubelet-client")
	if _, err := client.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("apiserver-kubelet-client: %v", err)
	}
}

// A directory made before the kubelets served TLS gains their files (and
// the apiserver's kubelet client pair) on the next run; nothing it already
// held changes.
func TestGenerateAddsTheKubeletFilesToAnExistingDirectory(t *testing.T) {
	c := newCluster(t)
	if err := os.RemoveAll(c.pkiPath("kubelets")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"apiserver-kubelet-client.crt", "apiserver-kubelet-client.key"} {
		if err := os.Remove(c.pkiPath(f)); err != nil {
			t.Fatal(err)
		}
	}
	before := c.snapshot()
	report, err := c.generate()
	if err != nil {
		t.Fatal(err)
	}
	var created []string
	for _, e := range report {
		if e.Action == Created {
			rel, _ := filepath.Rel(c.pkiPath(""), e.Path)
			created = append(created, rel)
		} else if e.Action != Kept {
			t.Errorf("%s %s", e.Action, e.Path)
		}
	}
	slices.Sort(created)
	want := []string{"apiserver-kubelet-client.crt", "apiserver-kubelet-client.key"}
	for _, n := range DefaultNodes() {
		d := KubeletServingDir(n)
		want = append(want, filepath.Join(d, "ca.crt"), filepath.Join(d, "kubelet.crt"), filepath.Join(d, "kubelet.key"))
	}
	slices.Sort(want)
	if !slices.Equal(created, want) {
		t.Errorf("created %q, want %q", created, want)
	}
	after := c.snapshot()
	for path, content := range before {
		if after[path] != content {
			t.Errorf("%s changed", path)
		}
	}
}
