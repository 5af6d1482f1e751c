package leaderelection

import (
	"context"
	"fmt"
	"sync"
)

// memoryStore is the shared record behind memoryLocks, with a version that
// plays the resourceVersion.
type memoryStore struct {
	mu      sync.Mutex
	exists  bool
	record  Record
	version int
	// fail makes every call fail (an unreachable apiserver).
	fail bool
}

func (s *memoryStore) setFail(f bool) {
	s.mu.Lock()
	s.fail = f
	s.mu.Unlock()
}

func (s *memoryStore) get() (Record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.record, s.exists
}

// memoryLock is one candidate's view of a memoryStore.
type memoryLock struct {
	store    *memoryStore
	identity string
	read     int
}

var _ Lock = (*memoryLock)(nil)

func newMemoryLock(s *memoryStore, identity string) *memoryLock {
	return &memoryLock{store: s, identity: identity}
}

var errUnavailable = fmt.Errorf("unavailable")

func (l *memoryLock) Get(context.Context) (Record, error) {
	s := l.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return Record{}, errUnavailable
	}
	if !s.exists {
		return Record{}, ErrLockNotFound
	}
	l.read = s.version
	return s.record, nil
}

func (l *memoryLock) Create(_ context.Context, r Record) error {
	s := l.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return errUnavailable
	}
	if s.exists {
		return ErrLockConflict
	}
	s.exists, s.record = true, r
	s.version++
	l.read = s.version
	return nil
}

func (l *memoryLock) Update(_ context.Context, r Record) error {
	s := l.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return errUnavailable
	}
	if !s.exists || s.version != l.read {
		return ErrLockConflict
	}
	s.record = r
	s.version++
	l.read = s.version
	return nil
}

func (l *memoryLock) Identity() string { return l.identity }
func (l *memoryLock) Describe() string { return "memory" }
