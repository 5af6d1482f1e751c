package resource

import quantity "podline.dev/pkg/resource"

// ErrFormat is returned for a string that is not a quantity (it is
// pkg/resource's error, which this package's parsing is).
var ErrFormat = quantity.ErrFormatWrong
