package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"net/http"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"podline.dev/pkg/client"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/pki"
	"podline.dev/pkg/secureserving"
	"podline.dev/services/watchcache/internal/replica"
)

// servingFlags say how the replica serves: TLS with its certificate, and
// with a client CA, each client authenticated by its certificate and
// authorized by the apiserver.
type servingFlags struct {
	cert, key, clientCA string
	apiserverURL        string
	authzTTL            time.Duration
}

func (f *servingFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.cert, "tls-cert-file", "", "serving certificate for gRPC and --metrics-address (plain text when empty)")
	fs.StringVar(&f.key, "tls-private-key-file", "", "serving key")
	fs.StringVar(&f.clientCA, "client-ca-file", "", "CA bundle that verifies client certificates (CN the user, O the groups); with it every gRPC client must present one, and each List and Watch, and each request to --metrics-address but the health paths, is authorized by the apiserver (--apiserver-url)")
	fs.StringVar(&f.apiserverURL, "apiserver-url", "", "the apiserver's HTTPS address (https://apiserver:6443), asked with a SubjectAccessReview whether a client may read what it asks")
	fs.DurationVar(&f.authzTTL, "authorization-cache-ttl", secureserving.DefaultAuthorizedTTL, "how long the apiserver's decisions are kept, allowed and denied")
}

// serving is what the flags make: the gRPC server's options, the metrics
// listener's TLS (nil: plain) and who decides (nil: every client).
type serving struct {
	grpcOpts   []grpc.ServerOption
	metricsTLS *tls.Config
	authorizer secureserving.Authorizer
	metrics    secureserving.Config
}

func (f servingFlags) options(creds client.Credentials) (serving, error) {
	if f.cert == "" {
		if f.clientCA != "" {
			return serving{}, fmt.Errorf("--client-ca-file needs --tls-cert-file")
		}
		return serving{}, nil
	}
	pair, err := tls.LoadX509KeyPair(f.cert, f.key)
	if err != nil {
		return serving{}, err
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	metricsTLS, err := secureserving.ServingTLS(f.cert, f.key)
	if err != nil {
		return serving{}, err
	}
	out := serving{metricsTLS: metricsTLS}
	if f.clientCA != "" {
		if f.apiserverURL == "" {
			return serving{}, fmt.Errorf("--client-ca-file needs --apiserver-url: the apiserver authorizes every client")
		}
		pool, err := pki.LoadCertPool(f.clientCA)
		if err != nil {
			return serving{}, err
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
		clientTLS, err := creds.TLSConfig()
		if err != nil {
			return serving{}, err
		}
		ttl := f.authzTTL
		out.authorizer = secureserving.NewCachedAuthorizer(
			secureserving.NewSubjectAccessReviews(f.apiserverURL, secureserving.HTTPClient(clientTLS)), clock.Real{}, ttl, ttl)
		out.metrics = secureserving.Config{Authenticator: secureserving.Authenticator{ClientCA: pool},
			Authorizer: out.authorizer, AlwaysAllowPaths: secureserving.DefaultAlwaysAllowPaths}
	}
	out.grpcOpts = []grpc.ServerOption{grpc.Creds(credentials.NewTLS(cfg))}
	return out, nil
}

// metricsHandler serves the replica's /metrics, /debug/pprof/ and health
// paths: behind the apiserver's authorization when clients are
// authenticated, else to anyone (on loopback, or over TLS when asked).
func (s serving) metricsHandler(r *replica.Replica) http.Handler {
	if s.authorizer == nil {
		return r.MetricsHandler()
	}
	return s.metrics.Handler(r.MetricsHandler())
}

// checkPlainMetrics refuses to serve /metrics and /debug/pprof/ in plain
// text anywhere but on loopback.
func checkPlainMetrics(addr string) error {
	if err := secureserving.RequireLoopback(addr); err != nil {
		return fmt.Errorf("--metrics-address without --tls-cert-file: metrics and pprof: %w", err)
	}
	return nil
}
