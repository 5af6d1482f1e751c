package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"podline.dev/pkg/clock"
	"podline.dev/pkg/pki"
	"podline.dev/pkg/secureserving"
	"podline.dev/services/kubelet/internal/server"
	"podline.dev/services/kubelet/internal/token"
	"podline.dev/services/kubelet/internal/volumes"
)

// Authorization modes of the kubelet's server (--authorization-mode).
const (
	modeWebhook     = "Webhook"
	modeAlwaysAllow = "AlwaysAllow"
)

// serverAuthFlags are the kubelet's flags for who may use its server.
type serverAuthFlags struct {
	clientCA              string
	anonymous             bool
	tokenWebhook          bool
	tokenCacheTTL         time.Duration
	mode                  string
	allowedTTL, deniedTTL time.Duration
}

// tokens builds the server's bearer-token authenticator: TokenReviews to
// the kubelet's kubeconfig apiserver, with the kubelet's own credentials,
// when --authentication-token-webhook is on; else nil.
func (f serverAuthFlags) tokens(o *options) (secureserving.TokenAuthenticator, error) {
	if !f.tokenWebhook {
		return nil, nil
	}
	url, client, err := o.reviewer("--authentication-token-webhook", "TokenReviews")
	if err != nil {
		return nil, err
	}
	return secureserving.NewCachedTokenAuthenticator(secureserving.NewTokenReviews(url, client), clock.Real{}, f.tokenCacheTTL), nil
}

// authorizer builds the server's authorizer. Webhook asks the apiserver the
// kubelet's kubeconfig names, with the kubelet's own credentials.
func (f serverAuthFlags) authorizer(o *options) (secureserving.Authorizer, error) {
	switch f.mode {
	case modeAlwaysAllow:
		return secureserving.AlwaysAllow, nil
	case modeWebhook:
		url, client, err := o.reviewer("--authorization-mode=Webhook", "SubjectAccessReviews")
		if err != nil {
			return nil, err
		}
		return secureserving.NewCachedAuthorizer(secureserving.NewSubjectAccessReviews(url, client), clock.Real{}, f.allowedTTL, f.deniedTTL), nil
	}
	return nil, fmt.Errorf("--authorization-mode=%s: want %s or %s", f.mode, modeWebhook, modeAlwaysAllow)
}

// serverConfig is the kubelet server's configuration from the flags.
func serverConfig(o *options) (server.Config, error) {
	cfg := server.Config{
		Addr:      fmt.Sprintf("%s:%d", o.address, o.port),
		CertFile:  o.tlsCert,
		KeyFile:   o.tlsKey,
		Anonymous: o.serverAuth.anonymous,
		NodeName:  o.nodeName,
	}
	if o.tlsCert == "" || o.tlsKey == "" {
		return cfg, server.ErrNoServingCertificate
	}
	if o.healthzPort > 0 {
		cfg.HealthzAddr = fmt.Sprintf("%s:%d", o.healthzAddress, o.healthzPort)
	}
	if o.serverAuth.clientCA != "" {
		pool, err := pki.LoadCertPool(o.serverAuth.clientCA)
		if err != nil {
			return cfg, fmt.Errorf("--client-ca-file: %w", err)
		}
		cfg.ClientCA = pool
	}
	z, err := o.serverAuth.authorizer(o)
	if err != nil {
		return cfg, err
	}
	cfg.Authorizer = z
	if cfg.Tokens, err = o.serverAuth.tokens(o); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// kubeconfigServer returns the server URL of the (single-cluster)
// kubeconfig at path, as `make certs` writes them.
func kubeconfigServer(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && k == "server" {
			return strings.Trim(strings.TrimSpace(v), `"'`), nil
		}
	}
	return "", fmt.Errorf("%s: no cluster server", path)
}

// tokenManager asks the --kubeconfig apiserver's TokenRequest API for the
// Pods' ServiceAccount tokens, with the kubelet's credentials; without a
// kubeconfig there is none (volumes then hold placeholder tokens).
func tokenManager(o *options, log *slog.Logger) (volumes.Tokens, error) {
	if o.creds.Kubeconfig == "" {
		return nil, nil
	}
	url, err := kubeconfigServer(o.creds.Kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg, err := o.creds.TLSConfig()
	if err != nil {
		return nil, err
	}
	return token.NewManager(token.NewAPI(url, cfg), clock.Real{}, log), nil
}

// reviewer is the apiserver the kubelet's kubeconfig names and a client
// carrying the kubelet's own credentials, for the reviews flag asks for.
func (o *options) reviewer(flag, reviews string) (string, *http.Client, error) {
	if o.creds.Kubeconfig == "" {
		return "", nil, fmt.Errorf("%s needs --kubeconfig (its server receives the %s)", flag, reviews)
	}
	url, err := kubeconfigServer(o.creds.Kubeconfig)
	if err != nil {
		return "", nil, err
	}
	cfg, err := o.creds.TLSConfig()
	if err != nil {
		return "", nil, err
	}
	return url, secureserving.HTTPClient(cfg), nil
}
