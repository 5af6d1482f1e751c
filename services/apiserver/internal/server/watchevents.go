package server

import (
	"podline.dev/proto/apis"
	"podline.dev/services/apiserver/internal/registry"
)

// SetWatchSinks hangs a sink (the NATS publisher's, see internal/natspub)
// on every resource's watch cache, so that each change the resource's one
// etcd watch brings is also told there. Call it before Run.
func (s *Server) SetWatchSinks(sinkFor func(apis.Resource) registry.EventSink) {
	for _, c := range s.cachers {
		c.SetSink(sinkFor(c.Resource()))
	}
}
