package volumes

import "errors"

var (
	// ErrHostPathType: a hostPath is not of the type the volume asks for.
	ErrHostPathType = errors.New("hostPath type check failed")
	// ErrUnsupported: a volume source the kubelet cannot set up.
	ErrUnsupported = errors.New("unsupported volume type")
)
