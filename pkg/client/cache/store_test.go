package cache

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
)

func TestStoreKeepsObjectsByNamespaceAndName(t *testing.T) {
	s := NewStore(MetaNamespaceKeyFunc)
	a := makePod("default", "a").RV("1").Obj()
	for _, err := range []error{
		s.Add(a),
		s.Add(makePod("kube-system", "a").Obj()),
		s.Update(makePod("default", "a").RV("2").Obj()),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := slices.Sorted(slices.Values(s.ListKeys())); !slices.Equal(got, []string{"default/a", "kube-system/a"}) {
		t.Fatalf("keys %v", got)
	}
	got, exists, err := s.Get(a)
	if err != nil || !exists || got.GetMetadata().GetResourceVersion() != "2" {
		t.Fatalf("Get = %v, %v, %v; want the updated pod", got, exists, err)
	}
	if err := s.Delete(a); err != nil {
		t.Fatal(err)
	}
	if _, exists, _ := s.GetByKey("default/a"); exists {
		t.Fatal("deleted pod still stored")
	}
	if err := s.Add(&corev1.Pod{}); !errors.As(err, new(KeyError)) {
		t.Fatalf("Add of a pod without metadata: %v, want a KeyError", err)
	}
}

func TestStoreDeletesByTombstoneKey(t *testing.T) {
	s := NewStore(nil)
	pod := makePod("default", "a").Obj()
	s.Add(pod)
	if err := s.Delete(DeletedFinalStateUnknown{Object: pod, Key: "default/a"}); err != nil {
		t.Fatal(err)
	}
	if len(s.List()) != 0 {
		t.Fatal("tombstone did not delete")
	}
}

func TestIndexerFollowsObjectsAcrossIndexedValues(t *testing.T) {
	idx := NewIndexer(nil, Indexers{NamespaceIndex: MetaNamespaceIndexFunc, "node": nodeIndexFunc})
	idx.Add(makePod("default", "a").Node("n1").Obj())
	idx.Add(makePod("default", "b").Node("n1").Obj())
	idx.Add(makePod("other", "c").Node("n2").Obj())

	byIndex := func(name, value string) []string {
		t.Helper()
		objs, err := idx.ByIndex(name, value)
		if err != nil {
			t.Fatal(err)
		}
		return keysOf(objs)
	}
	tests := []struct {
		step        string
		change      func()
		index, val  string
		want        []string
		wantIndexed []string // every value of the node index
	}{
		{"namespace index", func() {}, NamespaceIndex, "default", []string{"default/a", "default/b"}, []string{"n1", "n2"}},
		{"pods by node", func() {}, "node", "n1", []string{"default/a", "default/b"}, []string{"n1", "n2"}},
		{"an update moves a pod to another node", func() { idx.Update(makePod("default", "a").Node("n2").Obj()) },
			"node", "n2", []string{"default/a", "other/c"}, []string{"n1", "n2"}},
		{"a delete leaves the index", func() { idx.Delete(makePod("default", "b").Obj()) },
			"node", "n1", []string{}, []string{"n2"}},
	}
	for _, tt := range tests {
		tt.change()
		if got := byIndex(tt.index, tt.val); !slices.Equal(got, tt.want) {
			t.Errorf("%s: ByIndex(%s, %s) = %v, want %v", tt.step, tt.index, tt.val, got, tt.want)
		}
		if got := slices.Sorted(slices.Values(idx.ListIndexFuncValues("node"))); !slices.Equal(got, tt.wantIndexed) {
			t.Errorf("%s: node index values %v, want %v", tt.step, got, tt.wantIndexed)
		}
	}
	same, err := idx.Index("node", makePod("x", "y").Node("n2").Obj())
	if err != nil || !slices.Equal(keysOf(same), []string{"default/a", "other/c"}) {
		t.Errorf("Index = %v, %v", keysOf(same), err)
	}
	keys, _ := idx.IndexKeys(NamespaceIndex, "other")
	if !slices.Equal(keys, []string{"other/c"}) {
		t.Errorf("IndexKeys = %v", keys)
	}
	if _, err := idx.ByIndex("zone", "a"); !errors.Is(err, ErrIndexNotFound) {
		t.Errorf("ByIndex of a missing index: %v", err)
	}
}

func TestIndexerReplaceRebuildsIndexes(t *testing.T) {
	idx := NewIndexer(nil, Indexers{"node": nodeIndexFunc})
	idx.Add(makePod("default", "old").Node("n1").Obj())
	if err := idx.Replace([]object.Object{makePod("default", "new").Node("n2").Obj()}, "10"); err != nil {
		t.Fatal(err)
	}
	if objs, _ := idx.ByIndex("node", "n1"); len(objs) != 0 {
		t.Errorf("replaced pod still indexed: %v", keysOf(objs))
	}
	if objs, _ := idx.ByIndex("node", "n2"); !slices.Equal(keysOf(objs), []string{"default/new"}) {
		t.Errorf("new pod not indexed: %v", keysOf(objs))
	}
}

func TestIndexFuncErrorLeavesTheStoreUnchanged(t *testing.T) {
	failing := func(obj object.Object) ([]string, error) {
		if obj.GetMetadata().GetName() == "bad" {
			return nil, fmt.Errorf("no node")
		}
		return []string{"x"}, nil
	}
	idx := NewIndexer(nil, Indexers{"node": failing})
	if err := idx.Add(makePod("default", "bad").Obj()); err == nil {
		t.Fatal("index error not returned")
	}
	if len(idx.List()) != 0 || len(idx.ListIndexFuncValues("node")) != 0 {
		t.Fatal("a failed Add changed the store")
	}
}

func TestAddIndexersIndexesObjectsAlreadyStored(t *testing.T) {
	idx := NewIndexer(nil, nil)
	idx.Add(makePod("default", "a").Node("n1").Obj())
	if err := idx.AddIndexers(Indexers{"node": nodeIndexFunc}); err != nil {
		t.Fatal(err)
	}
	if objs, _ := idx.ByIndex("node", "n1"); len(objs) != 1 {
		t.Fatalf("existing pod not indexed: %v", keysOf(objs))
	}
	if err := idx.AddIndexers(Indexers{"node": nodeIndexFunc}); err == nil {
		t.Fatal("adding an index twice succeeded")
	}
}

func TestSplitMetaNamespaceKey(t *testing.T) {
	tests := []struct{ key, ns, name string }{
		{"default/web", "default", "web"},
		{"node-1", "", "node-1"},
	}
	for _, tt := range tests {
		ns, name, err := SplitMetaNamespaceKey(tt.key)
		if err != nil || ns != tt.ns || name != tt.name {
			t.Errorf("SplitMetaNamespaceKey(%q) = %q, %q, %v", tt.key, ns, name, err)
		}
	}
	if _, _, err := SplitMetaNamespaceKey("a/b/c"); err == nil {
		t.Error("a/b/c split")
	}
}

func BenchmarkStoreUpdate(b *testing.B) {
	idx := NewIndexer(nil, Indexers{NamespaceIndex: MetaNamespaceIndexFunc, "node": nodeIndexFunc})
	const n = 1000
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = makePod(fmt.Sprintf("ns-%d", i%10), fmt.Sprintf("pod-%d", i)).Node(fmt.Sprintf("node-%d", i%50)).Obj()
		idx.Add(pods[i])
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := idx.Update(pods[i%n]); err != nil {
			b.Fatal(err)
		}
	}
}
