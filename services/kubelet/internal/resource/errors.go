package resource

import "errors"

// ErrFormat is returned for a string that is not a quantity.
var ErrFormat = errors.New("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
