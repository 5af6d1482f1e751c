package main

import (
	"path/filepath"
	"testing"

	"podline.dev/pkg/pki"
	"podline.dev/pkg/secureserving"
	"podline.dev/services/kubelet/internal/server"
)

// The Webhook mode asks the apiserver the kubelet's kubeconfig names (the
// REST port), not the gRPC address the kubelet watches through.
func TestServerConfigFromFlags(t *testing.T) {
	dir := t.TempDir()
	if _, err := pki.Generate(pki.WithDir(dir), pki.WithNodes("worker-1"), pki.WithEtcdMembers(),
		pki.WithKubeconfigDir(filepath.Join(dir, "kubeconfigs")), pki.WithAdminKubeconfig(filepath.Join(dir, "kubeconfig")),
		pki.WithInternalServer("https://apiserver:6443")); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfigs", pki.KubeletCertName("worker-1")+".conf")
	if got, err := kubeconfigServer(kubeconfig); err != nil || got != "https://apiserver:6443" {
		t.Fatalf("kubeconfigServer = %q, %v", got, err)
	}
	serving := filepath.Join(dir, pki.KubeletServingCertName("worker-1"))
	args := []string{"--node-name=worker-1", "--kubeconfig=" + kubeconfig,
		"--tls-cert-file=" + serving + ".crt", "--tls-private-key-file=" + serving + ".key",
		"--client-ca-file=" + filepath.Join(dir, "ca.crt")}
	o, err := parseFlags(args)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := serverConfig(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg.Authorizer.(*secureserving.CachedAuthorizer); !ok || cfg.Anonymous || cfg.ClientCA == nil || cfg.Tokens != nil ||
		cfg.Addr != "0.0.0.0:10250" || cfg.HealthzAddr != "127.0.0.1:10248" || cfg.NodeName != "worker-1" {
		t.Fatalf("defaults: %+v", cfg)
	}
	o, _ = parseFlags(append(args, "--authentication-token-webhook"))
	if cfg, err := serverConfig(o); err != nil {
		t.Fatal(err)
	} else if _, ok := cfg.Tokens.(*secureserving.CachedTokenAuthenticator); !ok {
		t.Fatalf("--authentication-token-webhook: tokens %T", cfg.Tokens)
	}

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no serving certificate", []string{"--node-name=worker-1", "--kubeconfig=" + kubeconfig}, server.ErrNoServingCertificate.Error()},
		{"Webhook without a kubeconfig", append(args[2:], "--node-name=worker-1"), "--authorization-mode=Webhook needs --kubeconfig (its server receives the SubjectAccessReviews)"},
		{"an unknown mode", append(args, "--authorization-mode=Node"), "--authorization-mode=Node: want Webhook or AlwaysAllow"},
		{"token webhook without a kubeconfig", append(args[2:], "--node-name=worker-1", "--authorization-mode=AlwaysAllow", "--authentication-token-webhook"),
			"--authentication-token-webhook needs --kubeconfig (its server receives the TokenReviews)"},
	} {
		o, err := parseFlags(c.args)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := serverConfig(o); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	o, _ = parseFlags(append(args, "--authorization-mode=AlwaysAllow", "--healthz-port=0", "--anonymous-auth"))
	cfg, err = serverConfig(o)
	if _, ok := cfg.Authorizer.(secureserving.AuthorizerFunc); err != nil || !ok || cfg.HealthzAddr != "" || !cfg.Anonymous {
		t.Fatalf("AlwaysAllow, no healthz, anonymous: %+v %v", cfg, err)
	}
}
