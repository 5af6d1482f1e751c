package profile

import "errors"

// ErrInvalid wraps every problem found in a configuration.
var ErrInvalid = errors.New("invalid scheduler configuration")
