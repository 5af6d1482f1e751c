package main

import (
	"crypto/tls"
	"flag"
	"fmt"

	"podline.dev/pkg/pki"
)

// natsTLSFlags say how the replica proves itself to NATS and checks it.
type natsTLSFlags struct{ ca, cert, key string }

func (f *natsTLSFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.ca, "nats-ca-file", "", "CA bundle that verifies the NATS server; with it the connection is TLS whatever --nats-url's scheme, and a NATS without TLS is refused")
	fs.StringVar(&f.cert, "nats-cert-file", "", "client certificate the replica presents to NATS (with --nats-ca-file)")
	fs.StringVar(&f.key, "nats-key-file", "", "key of --nats-cert-file")
}

// config is the NATS connection's TLS; nil, plain, without the flags.
func (f natsTLSFlags) config() (*tls.Config, error) {
	cfg, err := pki.ClientTLS(f.ca, f.cert, f.key)
	if err != nil {
		return nil, fmt.Errorf("nats TLS: %w", err)
	}
	return cfg, nil
}
