package probes

import "sync"

// Result is a probe's outcome.
type Result int

const (
	Unknown Result = iota
	Success
	Failure
)

func (r Result) String() string {
	switch r {
	case Success:
		return "Success"
	case Failure:
		return "Failure"
	}
	return "Unknown"
}

// Kind is which probe.
type Kind int

const (
	Liveness Kind = iota
	Readiness
	Startup
)

func (k Kind) String() string {
	switch k {
	case Liveness:
		return "Liveness"
	case Readiness:
		return "Readiness"
	}
	return "Startup"
}

// initial is what a probe reports before it has run: a container is alive
// until proven otherwise, not ready until proven ready, and not started.
func (k Kind) initial() Result {
	switch k {
	case Liveness:
		return Success
	case Readiness:
		return Failure
	}
	return Unknown
}

// results holds the current result of one kind of probe by container ID.
type results struct {
	mu sync.RWMutex
	m  map[string]Result
}

func newResults() *results { return &results{m: map[string]Result{}} }

// set stores r and reports whether it changed.
func (s *results) set(id string, r Result) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, ok := s.m[id]
	s.m[id] = r
	return !ok || prev != r
}

func (s *results) get(id string) (Result, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.m[id]
	return r, ok
}

func (s *results) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}
