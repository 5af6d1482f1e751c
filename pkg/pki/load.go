package pki

import (
	"crypto/ecdsa"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// LoadKey reads a PEM ECDSA private key (PKCS #8 or SEC 1), such as the
// ServiceAccount signing key sa.key.
func LoadKey(path string) (*ecdsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key, err := decodeKey(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return key, nil
}

// LoadPublicKey reads a PEM PKIX ECDSA public key, such as sa.pub.
func LoadPublicKey(path string) (*ecdsa.PublicKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key, err := decodePublicKey(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return key, nil
}

// LoadCertPool reads every PEM certificate in path into a pool (a CA bundle).
func LoadCertPool(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s: %w", path, ErrNoPEM)
	}
	return pool, nil
}

// IssueClientCert writes Dir/name.crt and Dir/name.key: a client
// certificate for user in groups, signed by the cluster CA already in dir
// (made by Generate). It is for identities outside the cluster's plan: a
// test's users, an extra administrator. It returns the two paths.
func IssueClientCert(dir, name, user string, groups ...string) (crtPath, keyPath string, err error) {
	g := generator{o: newOptions([]Option{WithDir(dir)}), now: time.Now(), cas: map[Authority]authority{}}
	caCrt, err := os.ReadFile(g.path(string(ClusterCA) + ".crt"))
	if err != nil {
		return "", "", err
	}
	caCert, err := decodeCert(caCrt)
	if err != nil {
		return "", "", err
	}
	caKey, err := LoadKey(g.path(string(ClusterCA) + ".key"))
	if err != nil {
		return "", "", err
	}
	g.cas[ClusterCA] = authority{cert: caCert, key: caKey}
	if err := os.MkdirAll(filepath.Dir(g.path(name)), 0o755); err != nil {
		return "", "", err
	}
	if err := g.ensureCert(clientCert(name, user, groups...)); err != nil {
		return "", "", err
	}
	return g.path(name + ".crt"), g.path(name + ".key"), nil
}
