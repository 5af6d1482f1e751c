package pki

import "errors"

var (
	// ErrCAKeyMissing means a CA certificate exists on disk without its
	// private key, so nothing new can be signed by it. The CA is not
	// replaced, because other parties may already trust it.
	ErrCAKeyMissing = errors.New("pki: CA certificate present but its key is missing")

	// ErrNoPEM means a file that should hold a PEM block holds none.
	ErrNoPEM = errors.New("pki: no PEM block found")

	// ErrKeyType means a private or public key is not ECDSA.
	ErrKeyType = errors.New("pki: key is not ECDSA")

	// ErrInvalidName means a node or member name cannot be used as a
	// file name and a certificate subject.
	ErrInvalidName = errors.New("pki: invalid name")
)

// ErrCAInvalid means an existing CA certificate does not match its key, is
// not a CA, or is outside its validity period. It is not replaced.
var ErrCAInvalid = errors.New("pki: existing CA certificate is unusable")

// ErrIncompleteTLS means a TLS client is given part of what it needs: a
// certificate without its key, or a pair without a CA to verify the server.
var ErrIncompleteTLS = errors.New("pki: incomplete TLS client configuration")
