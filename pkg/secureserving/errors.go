package secureserving

import "errors"

// Errors of Options.Config.
var (
	// ErrNoServingCertificate means a secure port was asked for without a
	// certificate and key to serve it with.
	ErrNoServingCertificate = errors.New("secure serving needs --tls-cert-file and --tls-private-key-file (or --secure-port=0)")
	// ErrNoKubeconfig means there is no kubeconfig to reach the apiserver
	// with for the reviews.
	ErrNoKubeconfig = errors.New("secure serving needs a kubeconfig to ask the apiserver who a client is and what it may do (--authentication-kubeconfig, --authorization-kubeconfig or --kubeconfig)")
	// ErrNoServer means a kubeconfig names no server.
	ErrNoServer = errors.New("kubeconfig names no server")
	// ErrNotLoopback means a plain-HTTP address is not on loopback.
	ErrNotLoopback = errors.New("plain HTTP is served on loopback only")
)
