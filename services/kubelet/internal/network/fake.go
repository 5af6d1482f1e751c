package network

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
)

// Fake hands out addresses from a subnet in memory, one per sandbox, and
// gives a sandbox set up again its old address.
type Fake struct {
	mu     sync.Mutex
	prefix netip.Prefix
	next   netip.Addr
	byID   map[string]string
	// Err, when set, fails SetUpPod.
	Err        error
	adds, dels int
}

var _ Network = (*Fake)(nil)

// NewFake hands out addresses from cidr ("10.244.1.0/24") from .2 on.
func NewFake(cidr string) *Fake {
	p := netip.MustParsePrefix(cidr)
	return &Fake{prefix: p, next: p.Addr().Next().Next(), byID: map[string]string{}}
}

func (f *Fake) SetUpPod(_ context.Context, pod *PodNetwork) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.adds++
	if f.Err != nil {
		return nil, f.Err
	}
	if ip, ok := f.byID[pod.SandboxID]; ok {
		return []string{ip}, nil
	}
	if !f.prefix.Contains(f.next) {
		return nil, fmt.Errorf("no addresses left in %s", f.prefix)
	}
	ip := f.next.String()
	f.next = f.next.Next()
	f.byID[pod.SandboxID] = ip
	return []string{ip}, nil
}

func (f *Fake) TearDownPod(_ context.Context, pod *PodNetwork) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dels++
	delete(f.byID, pod.SandboxID)
	return nil
}

func (f *Fake) Status() error { return nil }

// Attached is the number of sandboxes holding an address.
func (f *Fake) Attached() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.byID)
}

// Calls counts SetUpPod and TearDownPod calls.
func (f *Fake) Calls() (adds, dels int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.adds, f.dels
}
