package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// restConfig is what the plugin needs from a kubeconfig: where the
// apiserver is, how to trust it and who to be.
type restConfig struct {
	Server    string
	Namespace string // the context's namespace, "" if none
	CA        []byte // PEM
	Insecure  bool   // insecure-skip-tls-verify
	Cert, Key []byte // PEM client certificate and key
	Token     string
}

// kubeconfigPath is the file kubectl would read: --kubeconfig, else the
// first file of $KUBECONFIG, else ~/.kube/config.
func kubeconfigPath(flag string) string {
	if flag != "" {
		return flag
	}
	for _, p := range filepath.SplitList(os.Getenv("KUBECONFIG")) {
		if p != "" {
			return p
		}
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".kube", "config")
}

// loadKubeconfig reads path and resolves context (the current context when
// ""): its cluster and user, with files named relative to the kubeconfig.
func loadKubeconfig(path, context string) (*restConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	doc, err := parseKubeconfigYAML(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if context == "" {
		context = str(doc["current-context"])
	}
	ctx := named(doc, "contexts", "context", context)
	if ctx == nil {
		return nil, fmt.Errorf("%w %s: no context %q", errKubeconfig, path, context)
	}
	cluster := named(doc, "clusters", "cluster", str(ctx["cluster"]))
	if cluster == nil || str(cluster["server"]) == "" {
		return nil, fmt.Errorf("%w %s: context %q names no cluster with a server", errKubeconfig, path, context)
	}
	user := named(doc, "users", "user", str(ctx["user"]))
	if user == nil {
		user = map[string]any{}
	}
	dir := filepath.Dir(path)
	rc := &restConfig{Server: strings.TrimRight(str(cluster["server"]), "/"), Namespace: str(ctx["namespace"]), Token: str(user["token"])}
	rc.Insecure, _ = cluster["insecure-skip-tls-verify"].(bool)
	if rc.CA, err = dataOrFile(cluster, "certificate-authority", dir); err != nil {
		return nil, err
	}
	if rc.Cert, err = dataOrFile(user, "client-certificate", dir); err != nil {
		return nil, err
	}
	if rc.Key, err = dataOrFile(user, "client-key", dir); err != nil {
		return nil, err
	}
	return rc, nil
}

// named finds {name: name, <field>: {...}} in doc's list and returns the
// inner map.
func named(doc map[string]any, list, field, name string) map[string]any {
	items, _ := doc[list].([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		if m != nil && str(m["name"]) == name {
			inner, _ := m[field].(map[string]any)
			return inner
		}
	}
	return nil
}

// dataOrFile reads "<key>-data" (base64) or the file "<key>".
func dataOrFile(m map[string]any, key, dir string) ([]byte, error) {
	if d := str(m[key+"-data"]); d != "" {
		b, err := base64.StdEncoding.DecodeString(d)
		if err != nil {
			return nil, fmt.Errorf("%w: %s-data: %v", errKubeconfig, key, err)
		}
		return b, nil
	}
	f := str(m[key])
	if f == "" {
		return nil, nil
	}
	if !filepath.IsAbs(f) {
		f = filepath.Join(dir, f)
	}
	return os.ReadFile(f)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// httpClient is an HTTP client that trusts rc's CA and presents its client
// certificate.
func (rc *restConfig) httpClient() (*http.Client, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: rc.Insecure}
	if len(rc.CA) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(rc.CA) {
			return nil, fmt.Errorf("%w: certificate-authority holds no PEM certificate", errKubeconfig)
		}
		tc.RootCAs = pool
	}
	if len(rc.Cert) > 0 || len(rc.Key) > 0 {
		pair, err := tls.X509KeyPair(rc.Cert, rc.Key)
		if err != nil {
			return nil, fmt.Errorf("%w: client certificate: %v", errKubeconfig, err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}, nil
}
