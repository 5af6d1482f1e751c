package cri

import "errors"

var (
	// ErrEndpoint: an endpoint that is not unix:///path.
	ErrEndpoint = errors.New("CRI endpoints are unix sockets: unix:///path")
	// ErrStream: the runtime's streaming server answered out of protocol.
	ErrStream = errors.New("runtime streaming protocol")
)
