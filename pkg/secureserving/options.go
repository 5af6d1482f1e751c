package secureserving

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"podline.dev/pkg/client"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/pki"
)

// Options are a component's secure-port flags, Kubernetes' names.
type Options struct {
	BindAddress  string
	SecurePort   int
	CertFile     string
	KeyFile      string
	ClientCAFile string

	// AuthenticationKubeconfig and AuthorizationKubeconfig reach the
	// apiserver for TokenReviews and SubjectAccessReviews; empty, the
	// component's own kubeconfig does (Config's argument).
	AuthenticationKubeconfig string
	AuthorizationKubeconfig  string
	TokenTTL                 time.Duration
	AuthorizedTTL            time.Duration
	UnauthorizedTTL          time.Duration
	AlwaysAllowPaths         string
}

// BindFlags registers the flags on fs with port as --secure-port's
// default (kube-scheduler's 10259).
func (o *Options) BindFlags(fs *flag.FlagSet, port int) {
	fs.StringVar(&o.BindAddress, "bind-address", "0.0.0.0", "the address the secure port listens on")
	fs.IntVar(&o.SecurePort, "secure-port", port, "the port /metrics and the health paths are served on with HTTPS, authenticated and authorized by the apiserver; 0 serves nothing")
	fs.StringVar(&o.CertFile, "tls-cert-file", "", "serving certificate of the secure port")
	fs.StringVar(&o.KeyFile, "tls-private-key-file", "", "serving key of the secure port")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", "", "CA bundle that verifies client certificates (CN the user, O the groups); without it, clients authenticate by bearer token only")
	fs.StringVar(&o.AuthenticationKubeconfig, "authentication-kubeconfig", "", "kubeconfig of the apiserver that reviews bearer tokens (TokenReview); empty: --kubeconfig")
	fs.StringVar(&o.AuthorizationKubeconfig, "authorization-kubeconfig", "", "kubeconfig of the apiserver that authorizes requests (SubjectAccessReview); empty: --kubeconfig")
	fs.DurationVar(&o.TokenTTL, "authentication-token-webhook-cache-ttl", DefaultTokenTTL, "how long the apiserver's token reviews are kept")
	fs.DurationVar(&o.AuthorizedTTL, "authorization-webhook-cache-authorized-ttl", DefaultAuthorizedTTL, "how long the apiserver's allows are kept")
	fs.DurationVar(&o.UnauthorizedTTL, "authorization-webhook-cache-unauthorized-ttl", DefaultUnauthorizedTTL, "how long the apiserver's refusals are kept")
	fs.StringVar(&o.AlwaysAllowPaths, "authorization-always-allow-paths", strings.Join(DefaultAlwaysAllowPaths, ","), "paths served to anyone, without authentication or authorization (a trailing * matches a prefix)")
}

// Enabled says whether a secure port is asked for.
func (o Options) Enabled() bool { return o.SecurePort != 0 }

// Address is host:port of the secure port.
func (o Options) Address() string {
	return net.JoinHostPort(o.BindAddress, strconv.Itoa(o.SecurePort))
}

// Config builds what the flags ask for: the serving TLS and the Config
// that authenticates clients by certificate (with --client-ca-file) and by
// TokenReview, and authorizes them by SubjectAccessReview, each answer
// kept for its TTL. kubeconfig is the component's own, for the reviews
// when no other is named.
func (o Options) Config(kubeconfig string) (*tls.Config, Config, error) {
	tlsCfg, err := ServingTLS(o.CertFile, o.KeyFile)
	if err != nil {
		return nil, Config{}, err
	}
	var ca *x509.CertPool
	if o.ClientCAFile != "" {
		if ca, err = pki.LoadCertPool(o.ClientCAFile); err != nil {
			return nil, Config{}, err
		}
	}
	authnServer, authnClient, err := reviewer(o.AuthenticationKubeconfig, kubeconfig)
	if err != nil {
		return nil, Config{}, err
	}
	authzServer, authzClient, err := reviewer(o.AuthorizationKubeconfig, kubeconfig)
	if err != nil {
		return nil, Config{}, err
	}
	var allow []string
	for _, p := range strings.Split(o.AlwaysAllowPaths, ",") {
		if p = strings.TrimSpace(p); p != "" {
			allow = append(allow, p)
		}
	}
	tokens := NewCachedTokenAuthenticator(NewTokenReviews(authnServer, authnClient), clock.Real{}, o.TokenTTL)
	authz := NewCachedAuthorizer(NewSubjectAccessReviews(authzServer, authzClient), clock.Real{}, o.AuthorizedTTL, o.UnauthorizedTTL)
	return tlsCfg, Config{
		Authenticator:    Authenticator{ClientCA: ca, Tokens: tokens},
		Authorizer:       authz,
		AlwaysAllowPaths: allow,
	}, nil
}

// reviewer is the apiserver's address and a client for it from the
// kubeconfig named, or else from fallback.
func reviewer(kubeconfig, fallback string) (string, *http.Client, error) {
	if kubeconfig == "" {
		kubeconfig = fallback
	}
	if kubeconfig == "" {
		return "", nil, ErrNoKubeconfig
	}
	server, err := kubeconfigServer(kubeconfig)
	if err != nil {
		return "", nil, err
	}
	cfg, err := client.Credentials{Kubeconfig: kubeconfig}.TLSConfig()
	if err != nil {
		return "", nil, err
	}
	return server, HTTPClient(cfg), nil
}

// kubeconfigServer is the first cluster's server in a kubeconfig (one
// cluster, as `make certs` writes them).
func kubeconfigServer(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if ok && k == "server" {
			if server := strings.Trim(strings.TrimSpace(v), `"'`); server != "" {
				return server, nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s: %w", path, ErrNoServer)
}
