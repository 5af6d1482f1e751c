package staticpods

import "errors"

// ErrNotAPod: a manifest of another kind.
var ErrNotAPod = errors.New("manifest is not a v1 Pod")
