package telemetry

import "errors"

// ErrOTLPEndpoint is returned by Setup for an OTLP endpoint it cannot
// export to as asked: an unknown scheme, or http:// together with a CA
// file, which asks for TLS.
var ErrOTLPEndpoint = errors.New("telemetry: bad OTLP endpoint")
