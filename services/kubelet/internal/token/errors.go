package token

import "errors"

// ErrRequest means the apiserver did not issue a token.
var ErrRequest = errors.New("token request failed")
