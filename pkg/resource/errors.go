package resource

import "errors"

var (
	// ErrFormatWrong is Kubernetes' error for a string that is not a quantity.
	ErrFormatWrong = errors.New("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
	// ErrSuffix is Kubernetes' error for an unknown suffix.
	ErrSuffix = errors.New("unable to parse quantity's suffix")
)
