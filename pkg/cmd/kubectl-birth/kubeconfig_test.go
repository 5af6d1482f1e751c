package main

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"podline.dev/pkg/pki"
)

// A kubeconfig as kubectl rewrites it (`kubectl config set-context`):
// unquoted scalars, sequences at their key's indent, files instead of data.
const kubectlStyle = `apiVersion: v1
clusters:
- cluster:
    certificate-authority: pki/ca.crt   # relative to this file
    server: https://127.0.0.1:6443
  name: podline
- cluster:
    insecure-skip-tls-verify: true
    server: 'https://other:6443'
  name: other
contexts:
- context:
    cluster: podline
    namespace: team-a
    user: admin
  name: admin@podline
- context: {cluster: other, user: admin}
  name: flow
current-context: admin@podline
kind: Config
preferences: {}
users:
- name: admin
  user:
    client-certificate: /abs/admin.crt
    client-key: pki/admin.key
    token: "s3cr\"et"
`

func TestParseKubectlStyleYAML(t *testing.T) {
	doc, err := parseKubeconfigYAML([]byte(kubectlStyle[:strings.Index(kubectlStyle, "- context: {")] + "current-context: admin@podline\n"))
	if err != nil {
		t.Fatal(err)
	}
	clusters := doc["clusters"].([]any)
	want := map[string]any{"name": "other", "cluster": map[string]any{"insecure-skip-tls-verify": true, "server": "https://other:6443"}}
	if len(clusters) != 2 || !reflect.DeepEqual(clusters[1], want) {
		t.Errorf("clusters %#v", clusters)
	}
	first := clusters[0].(map[string]any)["cluster"].(map[string]any)
	if first["certificate-authority"] != "pki/ca.crt" {
		t.Errorf("comment not stripped: %q", first["certificate-authority"])
	}
}

func TestFlowMapsOtherThanEmptyAreRefused(t *testing.T) {
	_, err := parseKubeconfigYAML([]byte(kubectlStyle))
	if err == nil || !strings.Contains(err.Error(), "line 18") {
		t.Fatalf("err %v, want the flow map's line refused", err)
	}
}

func TestKubeconfigResolvesTheCurrentContext(t *testing.T) {
	dir := t.TempDir()
	text := strings.Replace(kubectlStyle, "- context: {cluster: other, user: admin}\n  name: flow\n", "", 1)
	if err := os.MkdirAll(filepath.Join(dir, "pki"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"kubeconfig": text, "pki/ca.crt": "CA PEM", "pki/admin.key": "KEY PEM"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_, err := loadKubeconfig(filepath.Join(dir, "kubeconfig"), "")
	if err == nil || !strings.Contains(err.Error(), "/abs/admin.crt") {
		t.Fatalf("err %v, want the absolute client-certificate path read", err)
	}
	text = strings.Replace(text, "/abs/admin.crt", "pki/admin.key", 1)
	if err := os.WriteFile(filepath.Join(dir, "kubeconfig"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	rc, err := loadKubeconfig(filepath.Join(dir, "kubeconfig"), "")
	if err != nil {
		t.Fatal(err)
	}
	if rc.Server != "https://127.0.0.1:6443" || rc.Namespace != "team-a" || string(rc.CA) != "CA PEM" || string(rc.Key) != "KEY PEM" || rc.Token != `s3cr"et` {
		t.Errorf("config %+v", rc)
	}
	if _, err := loadKubeconfig(filepath.Join(dir, "kubeconfig"), "nope"); err == nil || !strings.Contains(err.Error(), `no context "nope"`) {
		t.Errorf("unknown context: %v", err)
	}
}

// The kubeconfig podline's pki writes, against a TLS server holding
// podline's apiserver certificate that requires a client certificate.
func TestPodlineKubeconfigSpeaksMutualTLS(t *testing.T) {
	dir := t.TempDir()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "no client certificate", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"metadata":{"name":"` + r.TLS.PeerCertificates[0].Subject.CommonName + `"}}`))
	}))
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if _, err := pki.Generate(pki.WithDir(filepath.Join(dir, "pki")), pki.WithAdminKubeconfig(kubeconfig),
		pki.WithKubeconfigDir(filepath.Join(dir, "kubeconfigs"))); err != nil {
		t.Fatal(err)
	}
	pool, err := pki.LoadCertPool(filepath.Join(dir, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "pki", "apiserver.crt"), filepath.Join(dir, "pki", "apiserver.key"))
	if err != nil {
		t.Fatal(err)
	}
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	defer srv.Close()
	rc, err := loadKubeconfig(kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	if rc.Server != pki.DefaultExternalServer {
		t.Errorf("server %q, want %q", rc.Server, pki.DefaultExternalServer)
	}
	rc.Server = srv.URL // the test server's port; same address, same certificates
	api, err := newAPIClient(rc)
	if err != nil {
		t.Fatal(err)
	}
	var got pod
	if err := api.get(context.Background(), "/whoami", nil, &got); err != nil {
		t.Fatal(err)
	}
	if got.Metadata.Name != "kubernetes-admin" {
		t.Errorf("server saw client %q, want the admin's certificate", got.Metadata.Name)
	}
}
