package authn

import "errors"

var (
	// ErrNoCredentials means the request presented nothing any
	// authenticator recognises.
	ErrNoCredentials = errors.New("authn: no credentials")
	// ErrInvalidToken means a bearer token was malformed, expired, badly
	// signed or for another audience.
	ErrInvalidToken = errors.New("authn: invalid bearer token")
	// ErrInvalidCertificate means a client certificate did not verify
	// against the client CA or names no user.
	ErrInvalidCertificate = errors.New("authn: invalid client certificate")
	// ErrServiceAccountGone means a token names a ServiceAccount that no
	// longer exists (or was recreated with another uid).
	ErrServiceAccountGone = errors.New("authn: service account not found")
	// ErrTokenInvalidated means a token is bound to a Pod that is gone,
	// was recreated, or is being deleted.
	ErrTokenInvalidated = errors.New("authn: service account token has been invalidated")
)
