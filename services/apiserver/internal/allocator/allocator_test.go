package allocator

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

func mustIPRange(t *testing.T, cidr string) *IPRange {
	t.Helper()
	r, err := ParseIPRange(cidr)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustPortRange(t *testing.T, s string) *PortRange {
	t.Helper()
	r, err := ParsePortRange(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func allocate(ctx context.Context, a *Allocator, value string) error {
	return a.Update(ctx, false, func(t *Txn) error { return t.Allocate(value) })
}

func next(ctx context.Context, a *Allocator) (string, error) {
	var v string
	err := a.Update(ctx, false, func(t *Txn) (err error) { v, err = t.Next(); return err })
	return v, err
}

func TestRangesMapValuesToOffsets(t *testing.T) {
	ip := mustIPRange(t, "10.96.0.0/12")
	if ip.Size() != 1<<20-2 || ip.First() != "10.96.0.1" || ip.Static() != 256 {
		t.Fatalf("10.96.0.0/12: size %d first %s static %d", ip.Size(), ip.First(), ip.Static())
	}
	if off, err := ip.Offset("10.96.0.10"); err != nil || off != 9 {
		t.Fatalf("offset of 10.96.0.10 = %d, %v", off, err)
	}
	if ip.Value(ip.Size()-1) != "10.111.255.254" {
		t.Fatalf("last IP %s", ip.Value(ip.Size()-1))
	}
	for _, bad := range []string{"10.96.0.0", "10.111.255.255", "10.112.0.1", "192.168.0.1"} {
		var nr *NotInRangeError
		if _, err := ip.Offset(bad); !errors.As(err, &nr) {
			t.Errorf("%s: %v, want not in range", bad, err)
		}
	}
	_, err := ip.Offset("1.1.1.1")
	if want := "the provided IP (1.1.1.1) is not in the valid range. The range of valid IPs is 10.96.0.0/12"; err == nil || err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	ports := mustPortRange(t, "30000-32767")
	if ports.Size() != 2768 || ports.Static() != 86 || ports.String() != "30000-32767" {
		t.Fatalf("ports: size %d static %d %s", ports.Size(), ports.Static(), ports)
	}
	_, err = ports.Offset("29999")
	if want := "provided port is not in the valid range. The range of valid ports is 30000-32767"; err == nil || err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	for _, bad := range []string{"10.96.0.0/8", "10.96.0.0/31", "fd00::/112", "nope"} {
		if _, err := ParseIPRange(bad); err == nil {
			t.Errorf("ParseIPRange(%q) accepted", bad)
		}
	}
	for _, bad := range []string{"32767-30000", "0-10", "30000-70000", "a-b"} {
		if _, err := ParsePortRange(bad); err == nil {
			t.Errorf("ParsePortRange(%q) accepted", bad)
		}
	}
}

func TestBitmapSnapshotIsBigEndianInteger(t *testing.T) {
	b := NewBitmap(20, 0)
	b.Set(0)
	b.Set(9)
	b.Set(17)
	// bits 0, 9, 17 = 0x020201
	if got := b.Snapshot(); !slices.Equal(got, []byte{0x02, 0x02, 0x01}) {
		t.Fatalf("snapshot % x", got)
	}
	c := NewBitmap(20, 0)
	c.Restore(b.Snapshot())
	if !c.Has(0) || !c.Has(9) || !c.Has(17) || c.Used() != 3 {
		t.Fatalf("restored %d bits", c.Used())
	}
	if got := NewBitmap(10, 0).Snapshot(); len(got) != 0 {
		t.Fatalf("empty snapshot % x", got)
	}
}

func TestDynamicAllocationKeepsOffTheStaticBand(t *testing.T) {
	b := NewBitmap(40, 16)
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 24 {
		off, ok := b.Next(rnd)
		if !ok || off < 16 {
			t.Fatalf("dynamic offset %d (ok %v) in the static band while the rest is free", off, ok)
		}
	}
	for range 16 {
		if off, ok := b.Next(rnd); !ok || off >= 16 {
			t.Fatalf("fallback offset %d ok %v", off, ok)
		}
	}
	if _, ok := b.Next(rnd); ok {
		t.Fatal("allocated from a full bitmap")
	}
}

func TestRequestedValues(t *testing.T) {
	ctx := context.Background()
	ips := New(mustIPRange(t, "10.96.0.0/12"), KeyServiceIPs, NewMemoryStore())
	ports := New(mustPortRange(t, "30000-32767"), KeyServiceNodePorts, NewMemoryStore())
	tests := []struct {
		name  string
		a     *Allocator
		value string
		want  error
	}{
		{"first IP is free", ips, "10.96.0.1", nil},
		{"kube-dns IP is free", ips, "10.96.0.10", nil},
		{"taken IP", ips, "10.96.0.10", ErrAllocatedIP},
		{"free port", ports, "30080", nil},
		{"taken port", ports, "30080", ErrAllocatedPort},
	}
	for _, tt := range tests {
		if err := allocate(ctx, tt.a, tt.value); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	var nr *NotInRangeError
	if err := allocate(ctx, ips, "10.0.0.1"); !errors.As(err, &nr) {
		t.Errorf("out of range: %v", err)
	}
}

func TestReleaseFreesValues(t *testing.T) {
	ctx := context.Background()
	a := New(mustPortRange(t, "30000-30002"), KeyServiceNodePorts, NewMemoryStore())
	for range 3 {
		if _, err := next(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := next(ctx, a); !errors.Is(err, ErrFull) {
		t.Fatalf("full range: %v", err)
	}
	if err := a.Release(ctx, "30001"); err != nil {
		t.Fatal(err)
	}
	if v, err := next(ctx, a); err != nil || v != "30001" {
		t.Fatalf("after release got %s, %v", v, err)
	}
}

func TestFailedUpdateStoresNothing(t *testing.T) {
	ctx := context.Background()
	a := New(mustPortRange(t, "30000-30010"), KeyServiceNodePorts, NewMemoryStore())
	err := a.Update(ctx, false, func(t *Txn) error {
		if err := t.Allocate("30001"); err != nil {
			return err
		}
		return t.Allocate("30001") // the second port of the same Service
	})
	if !errors.Is(err, ErrAllocatedPort) {
		t.Fatalf("got %v", err)
	}
	if used, _ := a.Used(ctx); len(used) != 0 {
		t.Fatalf("aborted update left %v", used)
	}
	if err := a.Update(ctx, true, func(t *Txn) error { return t.Allocate("30002") }); err != nil {
		t.Fatal(err)
	}
	if used, _ := a.Used(ctx); len(used) != 0 {
		t.Fatalf("dry run stored %v", used)
	}
}

// Several allocators over one store are several apiservers: their
// in-process locks do not exclude each other, only the store's
// compare-and-swap does.
func TestConcurrentAllocationNeverDoubles(t *testing.T) {
	ctx := context.Background()
	store := NewMemoryStore()
	rng := mustIPRange(t, "10.96.0.0/24") // 254 IPs, 16 static
	servers := []*Allocator{New(rng, KeyServiceIPs, store), New(rng, KeyServiceIPs, store), New(rng, KeyServiceIPs, store)}
	const workers, each = 24, 10
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				a := servers[(w+i)%len(servers)]
				var v string
				var err error
				if w == 0 && i < 4 {
					v = fmt.Sprintf("10.96.0.%d", 10+i) // requested IPs race with dynamic ones
					err = allocate(ctx, a, v)
				} else {
					v, err = next(ctx, a)
				}
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				got[v]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(got) != workers*each {
		t.Fatalf("%d distinct IPs for %d allocations", len(got), workers*each)
	}
	for v, n := range got {
		if n != 1 {
			t.Errorf("%s handed out %d times", v, n)
		}
	}
	used, err := servers[0].Used(ctx)
	if err != nil || len(used) != workers*each {
		t.Fatalf("stored %d allocations (%v), want %d", len(used), err, workers*each)
	}
}

func TestRepairFreesLeaksAndKeepsUsed(t *testing.T) {
	ctx := context.Background()
	a := New(mustPortRange(t, "30000-30100"), KeyServiceNodePorts, NewMemoryStore())
	for _, p := range []string{"30001", "30002", "30003"} {
		if err := allocate(ctx, a, p); err != nil {
			t.Fatal(err)
		}
	}
	inUse := []string{"30001", "30050"} // 30050 lost from the bitmap; 30002, 30003 leaked
	list := func(context.Context) ([]string, error) { return inUse, nil }
	r := NewRepairer(a, 2, nil)
	res, err := r.RunOnce(ctx, list)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Freed) != 0 || !slices.Equal(res.Restored, []string{"30050"}) {
		t.Fatalf("first run: %+v", res)
	}
	used, _ := a.Used(ctx)
	if !slices.Equal(used, []string{"30001", "30002", "30003", "30050"}) {
		t.Fatalf("after first run (leaks kept once): %v", used)
	}
	inUse = []string{"30001", "30050", "30003"} // 30003 was a create in flight
	res, err = r.RunOnce(ctx, list)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Freed, []string{"30002"}) {
		t.Fatalf("second run freed %v", res.Freed)
	}
	used, _ = a.Used(ctx)
	if !slices.Equal(used, []string{"30001", "30003", "30050"}) {
		t.Fatalf("after second run: %v", used)
	}
}

func TestRepairLosesToAConcurrentAllocation(t *testing.T) {
	ctx := context.Background()
	store := NewMemoryStore()
	a := New(mustPortRange(t, "30000-30100"), KeyServiceNodePorts, store)
	if err := allocate(ctx, a, "30001"); err != nil {
		t.Fatal(err)
	}
	r := NewRepairer(a, 1, nil)
	_, err := r.RunOnce(ctx, func(ctx context.Context) ([]string, error) {
		// A Service is created while the repair lists.
		if err := allocate(ctx, a, "30002"); err != nil {
			return nil, err
		}
		return nil, nil
	})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("got %v, want conflict", err)
	}
	if used, _ := a.Used(ctx); !slices.Equal(used, []string{"30001", "30002"}) {
		t.Fatalf("used %v", used)
	}
}

func TestRangeAllocationEncoding(t *testing.T) {
	s := Snapshot{Range: "10.96.0.0/12", Data: []byte{1, 2, 3}}
	got, err := DecodeRangeAllocation(EncodeRangeAllocation(s))
	if err != nil || got.Range != s.Range || !slices.Equal(got.Data, s.Data) {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	if _, err := DecodeRangeAllocation([]byte("{}")); err == nil {
		t.Fatal("decoded a value without the prefix")
	}
}
