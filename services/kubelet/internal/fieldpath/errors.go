package fieldpath

import "errors"

// ErrUnsupported is returned for a field path the downward API does not offer.
var ErrUnsupported = errors.New("unsupported field path")
