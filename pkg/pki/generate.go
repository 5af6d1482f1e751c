package pki

import (
	"crypto/ecdsa"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Generate makes sure every file of the cluster's identity exists and is
// usable, creating only what is missing or stale. A second call with the
// same options changes nothing and reports every file as Kept.
func Generate(opts ...Option) (Report, error) {
	o := newOptions(opts)
	plan, err := NewPlan(o)
	if err != nil {
		return nil, err
	}
	g := generator{o: o, now: o.Now(), cas: map[Authority]authority{}}
	for _, ca := range plan.CAs {
		if g.cas[ca], err = g.ensureCA(ca); err != nil {
			return g.report, fmt.Errorf("CA %s: %w", ca, err)
		}
	}
	for _, spec := range plan.Certs {
		if err := g.ensureCert(spec); err != nil {
			return g.report, fmt.Errorf("certificate %s: %w", spec.Name, err)
		}
	}
	if err := g.ensureServiceAccountKeys(); err != nil {
		return g.report, fmt.Errorf("service account keys: %w", err)
	}
	for _, c := range plan.Copies {
		data, err := os.ReadFile(g.path(c.From))
		if err != nil {
			return g.report, err
		}
		if err := ensureContent(&g.report, g.path(c.To), data, publicMode); err != nil {
			return g.report, err
		}
	}
	for _, k := range plan.Kubeconfigs {
		if err := g.ensureKubeconfig(k); err != nil {
			return g.report, fmt.Errorf("kubeconfig %s: %w", k.Path, err)
		}
	}
	return g.report, nil
}

// generator carries one Generate call's state.
type generator struct {
	o      Options
	now    time.Time
	cas    map[Authority]authority
	report Report
}

func (g *generator) path(name string) string { return filepath.Join(g.o.Dir, name) }

// ensureKey loads name+".key", or creates it when missing or unreadable.
func (g *generator) ensureKey(name string) (*ecdsa.PrivateKey, error) {
	path := g.path(name + ".key")
	data, err := readIfExists(path)
	if err != nil {
		return nil, err
	}
	if data != nil {
		if key, err := decodeKey(data); err == nil {
			g.report.add(path, Kept)
			return key, nil
		}
	}
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	pem, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	action := Created
	if data != nil {
		action = Replaced
	}
	g.report.add(path, action)
	return key, writeAtomic(path, pem, privateMode)
}

// ensureCA loads a CA or creates it. An existing CA certificate is never
// replaced: everything else in the cluster trusts it.
func (g *generator) ensureCA(ca Authority) (authority, error) {
	crtPath, keyPath := g.path(string(ca)+".crt"), g.path(string(ca)+".key")
	crtPEM, err := readIfExists(crtPath)
	if err != nil {
		return authority{}, err
	}
	if crtPEM != nil {
		if _, err := os.Stat(keyPath); err != nil {
			return authority{}, fmt.Errorf("%w: %s", ErrCAKeyMissing, keyPath)
		}
	}
	key, err := g.ensureKey(string(ca))
	if err != nil {
		return authority{}, err
	}
	if crtPEM == nil {
		der, err := selfSign(ca, key, g.now, g.o.CAValidity)
		if err != nil {
			return authority{}, err
		}
		crtPEM = encodeCert(der)
		g.report.add(crtPath, Created)
		if err := writeAtomic(crtPath, crtPEM, publicMode); err != nil {
			return authority{}, err
		}
	} else {
		g.report.add(crtPath, Kept)
	}
	cert, err := decodeCert(crtPEM)
	if err != nil {
		return authority{}, fmt.Errorf("%w: %s: %v", ErrCAInvalid, crtPath, err)
	}
	if !cert.IsCA || !key.PublicKey.Equal(cert.PublicKey) ||
		g.now.Before(cert.NotBefore) || g.now.After(cert.NotAfter) {
		return authority{}, fmt.Errorf("%w: %s (remove %s to start over)", ErrCAInvalid, crtPath, g.o.Dir)
	}
	return authority{cert: cert, key: key}, nil
}

// ensureCert keeps a leaf certificate that still satisfies its spec and
// issues a new one otherwise, reusing the key when there is one.
func (g *generator) ensureCert(spec CertSpec) error {
	ca := g.cas[spec.Signer]
	key, err := g.ensureKey(spec.Name)
	if err != nil {
		return err
	}
	path := g.path(spec.Name + ".crt")
	old, err := readIfExists(path)
	if err != nil {
		return err
	}
	if old != nil {
		cert, err := decodeCert(old)
		if err == nil && key.PublicKey.Equal(cert.PublicKey) && satisfies(cert, spec, ca, g.now) {
			g.report.add(path, Kept)
			return nil
		}
	}
	der, err := issue(spec, &key.PublicKey, ca, g.now, g.o.CertValidity)
	if err != nil {
		return err
	}
	action := Created
	if old != nil {
		action = Replaced
	}
	g.report.add(path, action)
	return writeAtomic(path, encodeCert(der), publicMode)
}

// ensureServiceAccountKeys keeps sa.key and derives sa.pub from it, the pair
// the apiserver signs and verifies ServiceAccount tokens with.
func (g *generator) ensureServiceAccountKeys() error {
	key, err := g.ensureKey(serviceAccount)
	if err != nil {
		return err
	}
	pub, err := encodePublicKey(key)
	if err != nil {
		return err
	}
	return ensureContent(&g.report, g.path(ServiceAccountPub), pub, publicMode)
}

// ensureKubeconfig renders a kubeconfig from the files on disk and writes it
// when it differs, so it always embeds the current certificate.
func (g *generator) ensureKubeconfig(k KubeconfigSpec) error {
	ca, err := os.ReadFile(g.path(string(ClusterCA) + ".crt"))
	if err != nil {
		return err
	}
	cert, err := os.ReadFile(g.path(k.Cert + ".crt"))
	if err != nil {
		return err
	}
	key, err := os.ReadFile(g.path(k.Cert + ".key"))
	if err != nil {
		return err
	}
	data := renderKubeconfig(kubeconfig{
		Server: k.Server, User: k.User, CA: ca, Cert: cert, Key: key,
	})
	return ensureContent(&g.report, k.Path, data, privateMode)
}
