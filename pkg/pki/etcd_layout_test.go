package pki

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Each member directory is mounted at /etc/kubernetes/pki/etcd, so it must
// hold kubeadm's file names and nothing else: no CA key, no other member's
// keys.
func TestEtcdMemberDirectoriesHaveKubeadmNames(t *testing.T) {
	c := newCluster(t)
	etcdCA := c.read(c.pkiPath("etcd/ca.crt"))
	for _, member := range DefaultEtcdMembers() {
		t.Run(member, func(t *testing.T) {
			dir := c.pkiPath(EtcdMemberDir(member))
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			want := []string{"ca.crt", EtcdOTLPCA, "peer.crt", "peer.key", "server.crt", "server.key"}
			if !slices.Equal(names, want) {
				t.Errorf("files = %q, want %q", names, want)
			}
			if !bytes.Equal(c.read(filepath.Join(dir, "ca.crt")), etcdCA) {
				t.Error("ca.crt is not the etcd CA")
			}
			// What etcdctl --cacert ca.crt --cert server.crt --key server.key
			// does inside the member: present server.crt as a client cert.
			pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key"))
			if err != nil {
				t.Fatal(err)
			}
			leaf, err := x509.ParseCertificate(pair.Certificate[0])
			if err != nil {
				t.Fatal(err)
			}
			roots := x509.NewCertPool()
			roots.AppendCertsFromPEM(c.read(filepath.Join(dir, "ca.crt")))
			_, err = leaf.Verify(x509.VerifyOptions{
				Roots:     roots,
				DNSName:   member,
				KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
			})
			if err != nil {
				t.Errorf("server.crt as client of %s: %v", member, err)
			}
		})
	}
}
