package rules

import "errors"

// ErrNotIPv4 means an address or CIDR given to the rule builder is not
// IPv4; the proxy's table is of family ip.
var ErrNotIPv4 = errors.New("rules: not an IPv4 address or CIDR")
