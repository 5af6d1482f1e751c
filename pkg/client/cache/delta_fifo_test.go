package cache

import (
	"errors"
	"slices"
	"testing"

	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
)

// popped is one Pop's result in a comparable form.
type popped struct {
	key     string
	types   []DeltaType
	initial bool
}

func pop(t *testing.T, f *DeltaFIFO) (popped, Deltas) {
	t.Helper()
	var p popped
	deltas, err := f.Pop(func(d Deltas, initial bool) error {
		p.initial = initial
		return nil
	})
	if err != nil {
		t.Fatalf("Pop: %v", err)
	}
	p.key, _ = f.KeyOf(deltas.Newest().Object)
	for _, d := range deltas {
		p.types = append(p.types, d.Type)
	}
	return p, deltas
}

func TestDeltaFIFOQueuesEachKeysChangesInOrder(t *testing.T) {
	a, b := makePod("default", "a"), makePod("default", "b")
	f := NewDeltaFIFO(nil, nil)
	f.Add(a.RV("1").Obj())
	f.Add(b.RV("2").Obj())
	f.Update(makePod("default", "a").RV("3").Obj())
	f.Delete(makePod("default", "b").RV("4").Obj())

	want := []popped{
		{key: "default/a", types: []DeltaType{Added, Updated}},
		{key: "default/b", types: []DeltaType{Added, Deleted}},
	}
	for _, w := range want {
		got, deltas := pop(t, f)
		if got.key != w.key || !slices.Equal(got.types, w.types) {
			t.Errorf("popped %v, want %v", got, w)
		}
		if deltas.Oldest().Object == deltas.Newest().Object {
			t.Errorf("%s: every delta should carry its own object", w.key)
		}
	}
}

func TestDeltaFIFOCompressesConsecutiveDeletes(t *testing.T) {
	pod := makePod("default", "a").RV("5").Obj()
	tombstone := DeletedFinalStateUnknown{Object: pod, Key: "default/a"}
	tests := []struct {
		name string
		ops  func(f *DeltaFIFO)
		want []DeltaType
		// wantTombstone: the remaining Deleted carries a DeletedFinalStateUnknown.
		wantTombstone bool
	}{
		{"delete, delete", func(f *DeltaFIFO) { f.Add(pod); f.Delete(pod); f.Delete(pod) },
			[]DeltaType{Added, Deleted}, false},
		{"delete, tombstone keeps the real final state", func(f *DeltaFIFO) { f.Add(pod); f.Delete(pod); f.Delete(tombstone) },
			[]DeltaType{Added, Deleted}, false},
		{"tombstone, delete prefers the real final state", func(f *DeltaFIFO) { f.Add(pod); f.Delete(tombstone); f.Delete(pod) },
			[]DeltaType{Added, Deleted}, false},
		{"tombstone, tombstone", func(f *DeltaFIFO) { f.Add(pod); f.Delete(tombstone); f.Delete(tombstone) },
			[]DeltaType{Added, Deleted}, true},
		{"updates are not compressed", func(f *DeltaFIFO) { f.Add(pod); f.Update(pod); f.Update(pod) },
			[]DeltaType{Added, Updated, Updated}, false},
		{"delete, add, delete is kept", func(f *DeltaFIFO) { f.Add(pod); f.Delete(pod); f.Add(pod); f.Delete(pod) },
			[]DeltaType{Added, Deleted, Added, Deleted}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewDeltaFIFO(nil, nil)
			tt.ops(f)
			got, deltas := pop(t, f)
			if !slices.Equal(got.types, tt.want) {
				t.Fatalf("deltas %v, want %v", got.types, tt.want)
			}
			_, isTombstone := deltas.Newest().Object.(DeletedFinalStateUnknown)
			if isTombstone != tt.wantTombstone {
				t.Fatalf("final delete carries a tombstone: %v, want %v", isTombstone, tt.wantTombstone)
			}
			if f.Len() != 0 {
				t.Fatalf("%d keys left", f.Len())
			}
		})
	}
}

func TestDeltaFIFODeleteOfAnUnknownKeyIsIgnored(t *testing.T) {
	known := NewStore(nil)
	f := NewDeltaFIFO(nil, known)
	f.Delete(makePod("default", "never-seen").Obj())
	if f.Len() != 0 {
		t.Fatal("a delete of an object nobody knows was queued")
	}
	known.Add(makePod("default", "cached").Obj())
	f.Delete(makePod("default", "cached").Obj())
	if f.Len() != 1 {
		t.Fatal("a delete of a cached object was not queued")
	}
}

func TestDeltaFIFOReplaceReportsVanishedKeysAsDeletedFinalStateUnknown(t *testing.T) {
	known := NewStore(nil)
	known.Add(makePod("default", "kept").RV("1").Obj())
	known.Add(makePod("default", "gone").Node("n1").RV("2").Obj())
	f := NewDeltaFIFO(nil, known)
	f.Add(makePod("default", "queued-gone").RV("3").Obj()) // added, not popped yet, deleted during the outage

	f.Replace([]object.Object{
		makePod("default", "kept").RV("1").Obj(),
		makePod("default", "new").RV("4").Obj(),
	}, "10")

	got := map[string][]DeltaType{}
	tombstones := map[string]DeletedFinalStateUnknown{}
	for f.Len() > 0 {
		p, deltas := pop(t, f)
		got[p.key] = p.types
		if d, ok := deltas.Newest().Object.(DeletedFinalStateUnknown); ok {
			tombstones[p.key] = d
		}
	}
	want := map[string][]DeltaType{
		"default/kept":        {Replaced},
		"default/new":         {Replaced},
		"default/gone":        {Deleted},
		"default/queued-gone": {Added, Deleted},
	}
	for k, w := range want {
		if !slices.Equal(got[k], w) {
			t.Errorf("%s: deltas %v, want %v", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("popped %v, want %v", got, want)
	}
	gone := tombstones["default/gone"]
	if gone.Key != "default/gone" || gone.Object.(*corev1.Pod).GetSpec().GetNodeName() != "n1" {
		t.Errorf("tombstone %+v does not carry the last known state", gone)
	}
	if _, ok := tombstones["default/queued-gone"]; !ok {
		t.Error("a queued key that vanished got no tombstone")
	}
}

func TestDeltaFIFOWithoutKnownObjectsDetectsDeletionsAmongQueuedKeys(t *testing.T) {
	f := NewDeltaFIFO(nil, nil)
	f.Add(makePod("default", "a").Obj())
	f.Add(makePod("default", "b").Obj())
	f.Replace([]object.Object{makePod("default", "a").Obj()}, "5")
	got := map[string][]DeltaType{}
	for f.Len() > 0 {
		p, _ := pop(t, f)
		got[p.key] = p.types
	}
	if !slices.Equal(got["default/a"], []DeltaType{Added, Replaced}) || !slices.Equal(got["default/b"], []DeltaType{Added, Deleted}) {
		t.Fatalf("got %v", got)
	}
}

func TestDeltaFIFOHasSyncedOnceTheFirstReplaceIsPopped(t *testing.T) {
	f := NewDeltaFIFO(nil, NewStore(nil))
	if f.HasSynced() {
		t.Fatal("synced before anything happened")
	}
	f.Replace([]object.Object{makePod("default", "a").Obj(), makePod("default", "b").Obj()}, "1")
	f.Add(makePod("default", "c").Obj()) // after the list: not part of the initial population
	for i, wantInitial := range []bool{true, true, false} {
		if i < 2 && f.HasSynced() {
			t.Fatalf("synced with %d of 2 initial keys popped", i)
		}
		if p, _ := pop(t, f); p.initial != wantInitial {
			t.Errorf("pop %d (%s): isInInitialList %v, want %v", i, p.key, p.initial, wantInitial)
		}
		if i == 1 && !f.HasSynced() {
			t.Fatal("not synced after the initial keys were popped")
		}
	}
}

func TestDeltaFIFOResyncQueuesSyncForIdleKnownObjects(t *testing.T) {
	known := NewStore(nil)
	known.Add(makePod("default", "idle").Obj())
	known.Add(makePod("default", "busy").Obj())
	f := NewDeltaFIFO(nil, known)
	f.Update(makePod("default", "busy").RV("9").Obj())
	f.Resync()
	got := map[string][]DeltaType{}
	for f.Len() > 0 {
		p, _ := pop(t, f)
		got[p.key] = p.types
	}
	if !slices.Equal(got["default/idle"], []DeltaType{Sync}) || !slices.Equal(got["default/busy"], []DeltaType{Updated}) {
		t.Fatalf("got %v: want Sync only for the key without pending deltas", got)
	}
}

func TestDeltaFIFOPopAfterCloseDrainsThenFails(t *testing.T) {
	f := NewDeltaFIFO(nil, nil)
	f.Add(makePod("default", "a").Obj())
	f.Close()
	if _, err := f.Pop(func(Deltas, bool) error { return nil }); err != nil {
		t.Fatalf("Pop of a queued key after Close: %v", err)
	}
	if _, err := f.Pop(func(Deltas, bool) error { return nil }); !errors.Is(err, ErrFIFOClosed) {
		t.Fatalf("Pop of a closed, empty FIFO: %v", err)
	}
	if !f.IsClosed() {
		t.Fatal("IsClosed is false")
	}
}

func TestDeltaFIFOPopReturnsTheProcessError(t *testing.T) {
	f := NewDeltaFIFO(nil, nil)
	f.Add(makePod("default", "a").Obj())
	boom := errors.New("boom")
	if _, err := f.Pop(func(Deltas, bool) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
}

func TestAsUnwrapsTombstones(t *testing.T) {
	pod := makePod("default", "a").Obj()
	for _, obj := range []object.Object{pod, DeletedFinalStateUnknown{Object: pod, Key: "default/a"}} {
		got, ok := As[*corev1.Pod](obj)
		if !ok || got != pod {
			t.Errorf("As(%T) = %v, %v", obj, got, ok)
		}
	}
	if _, ok := As[*corev1.Node](pod); ok {
		t.Error("a pod converted to a node")
	}
	// A tombstone is an object.Object with the last known metadata.
	if key := object.Key(DeletedFinalStateUnknown{Object: pod, Key: "default/a"}); key != "default/a" {
		t.Errorf("tombstone key %q", key)
	}
}
