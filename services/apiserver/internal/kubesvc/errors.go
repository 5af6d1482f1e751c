package kubesvc

import "errors"

// ErrNoAdvertiseAddress: no address was given and the host has no
// non-loopback IPv4 address to advertise.
var ErrNoAdvertiseAddress = errors.New("no advertise address: pass --advertise-address (the host has no non-loopback IPv4 address)")
