package probes

import "crypto/tls"

// insecureTLS is the TLS of HTTPS probes: Kubernetes does not verify the
// container's certificate.
func insecureTLS() *tls.Config { return &tls.Config{InsecureSkipVerify: true} } //nolint:gosec // as kube-probe
