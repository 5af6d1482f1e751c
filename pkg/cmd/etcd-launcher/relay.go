package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"podline.dev/pkg/pki"
)

// relay carries plain-text connections, byte for byte, over TLS to one
// upstream. gRPC from an insecure client is HTTP/2 with prior knowledge, so
// offering ALPN "h2" on the TLS side is all it takes for a gRPC server to
// take the same bytes over TLS.
type relay struct {
	upstream string
	tls      *tls.Config
	log      *slog.Logger
}

// dialTimeout bounds the TCP connect and TLS handshake to the upstream.
const dialTimeout = 10 * time.Second

// newRelay returns a relay to upstream (host:port) that verifies the
// upstream's certificate for its host with the CA bundle in caFile.
func newRelay(upstream, caFile string, log *slog.Logger) (*relay, error) {
	host, _, err := net.SplitHostPort(upstream)
	if err != nil {
		return nil, err
	}
	cfg, err := pki.ClientTLS(caFile, "", "")
	if err != nil {
		return nil, err
	}
	if cfg == nil {
		return nil, fmt.Errorf("%w: no CA bundle to verify %s with", pki.ErrIncompleteTLS, upstream)
	}
	cfg.ServerName, cfg.NextProtos = host, []string{"h2"}
	return &relay{upstream: upstream, tls: cfg, log: log}, nil
}

// serve carries every connection accepted on l until l is closed.
func (r *relay) serve(l net.Listener) error {
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		go r.carry(c)
	}
}

// carry copies c to a new TLS connection to the upstream and back. When
// either side ends, both connections are closed: gRPC over HTTP/2 has no
// use for a half-closed connection. An upstream that cannot be reached or
// verified closes c, and the exporter behind it retries.
func (r *relay) carry(c net.Conn) {
	defer c.Close()
	up, err := tls.DialWithDialer(&net.Dialer{Timeout: dialTimeout}, "tcp", r.upstream, r.tls)
	if err != nil {
		r.log.Warn("relay: upstream", "upstream", r.upstream, "err", err)
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	c.Close()
	up.Close()
	<-done
}
