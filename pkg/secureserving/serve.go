package secureserving

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// ServingTLS is the TLS of a secure port serving certFile and keyFile.
// Clients may present a certificate; the Authenticator verifies it, so a
// bad one gets a 401 rather than a failed handshake, and a client without
// one still reaches the always-allowed paths.
func ServingTLS(certFile, keyFile string) (*tls.Config, error) {
	if certFile == "" || keyFile == "" {
		return nil, ErrNoServingCertificate
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12}, nil
}

// Serve serves h on lis until ctx ends, then shuts down within 5 s. It
// returns nil once ctx has ended, else why serving stopped. Wrap lis with
// tls.NewListener for HTTPS.
func Serve(ctx context.Context, lis net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		select {
		case <-ctx.Done():
		case <-stopped:
			return
		}
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(lis); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// RequireLoopback refuses a host:port that is not on loopback: what is
// served in plain HTTP, the health paths for a container's healthcheck,
// stays inside the container.
func RequireLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s: %w", addr, ErrNotLoopback)
	}
	return nil
}
