package pki

import (
	"crypto/tls"
	"fmt"
)

// ClientTLS is the TLS configuration of a client that verifies its server
// by the CA bundle in caFile and presents the pair in certFile and keyFile,
// when they are given (both or neither); nil, for a plain connection, when
// no file is given. The server name is left to the caller, or to the
// client library, which takes the host it dials.
func ClientTLS(caFile, certFile, keyFile string) (*tls.Config, error) {
	if caFile == "" && certFile == "" && keyFile == "" {
		return nil, nil
	}
	if caFile == "" {
		return nil, fmt.Errorf("%w: no CA bundle to verify the server with", ErrIncompleteTLS)
	}
	if (certFile == "") != (keyFile == "") {
		return nil, fmt.Errorf("%w: a client certificate and its key go together", ErrIncompleteTLS)
	}
	pool, err := LoadCertPool(caFile)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
