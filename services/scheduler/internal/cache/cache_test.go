package cache_test

import (
	"testing"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/cache"
	st "podline.dev/services/scheduler/testing"
)

func names(s *cache.Snapshot) []string {
	var out []string
	for _, ni := range s.List() {
		out = append(out, ni.Name())
	}
	return out
}

func TestSnapshotInterleavesZones(t *testing.T) {
	c := cache.New(nil)
	for _, n := range []*corev1.Node{
		st.MakeNode().Name("a1").Zone("a").Obj(), st.MakeNode().Name("a2").Zone("a").Obj(), st.MakeNode().Name("a3").Zone("a").Obj(),
		st.MakeNode().Name("b1").Zone("b").Obj(),
		st.MakeNode().Name("c1").Zone("c").Obj(), st.MakeNode().Name("c2").Zone("c").Obj(),
	} {
		c.AddNode(n)
	}
	s := cache.NewEmptySnapshot()
	c.UpdateSnapshot(s)
	got := names(s)
	want := []string{"a1", "b1", "c1", "a2", "c2", "a3"}
	if len(got) != len(want) {
		t.Fatalf("list = %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("list = %v, want %v", got, want)
		}
	}
}

func TestAssumedPodCountsUntilConfirmedOrForgotten(t *testing.T) {
	c := cache.New(nil)
	c.AddNode(st.MakeNode().Name("n1").Capacity("4", "8Gi").Obj())
	s := cache.NewEmptySnapshot()
	pod := st.MakePod().Name("p").Req("1", "1Gi").Node("n1").Obj()

	if err := c.AssumePod(pod); err != nil {
		t.Fatal(err)
	}
	c.UpdateSnapshot(s)
	ni, _ := s.Get("n1")
	if ni.Requested.MilliCPU != 1000 || !c.IsAssumedPod(pod) {
		t.Fatalf("assumed pod not counted: %+v", ni.Requested)
	}
	if err := c.AssumePod(pod); err == nil {
		t.Error("assumed twice")
	}
	// The informer sees the binding: the pod is confirmed, counted once.
	c.AddPod(pod)
	c.UpdateSnapshot(s)
	ni, _ = s.Get("n1")
	if ni.Requested.MilliCPU != 1000 || len(ni.Pods) != 1 || c.IsAssumedPod(pod) {
		t.Fatalf("after confirmation: %+v, %d pods", ni.Requested, len(ni.Pods))
	}
	if err := c.ForgetPod(pod); err == nil {
		t.Error("forgot a confirmed pod")
	}

	other := st.MakePod().Name("q").Req("2", "").Node("n1").Obj()
	_ = c.AssumePod(other)
	if err := c.ForgetPod(other); err != nil {
		t.Fatal(err)
	}
	c.UpdateSnapshot(s)
	ni, _ = s.Get("n1")
	if ni.Requested.MilliCPU != 1000 {
		t.Errorf("forgotten pod still counted: %+v", ni.Requested)
	}
}

func TestSnapshotCopiesOnlyChangedNodes(t *testing.T) {
	c := cache.New(nil)
	c.AddNode(st.MakeNode().Name("n1").Obj())
	c.AddNode(st.MakeNode().Name("n2").Obj())
	s := cache.NewEmptySnapshot()
	c.UpdateSnapshot(s)
	n1, _ := s.Get("n1")
	n2, _ := s.Get("n2")
	gen1, gen2 := n1.Generation, n2.Generation
	c.AddPod(st.MakePod().Name("p").Node("n2").Obj())
	c.UpdateSnapshot(s)
	n1, _ = s.Get("n1")
	n2, _ = s.Get("n2")
	if n1.Generation != gen1 || n2.Generation == gen2 || len(n2.Pods) != 1 {
		t.Errorf("generations %d→%d, %d→%d; n2 pods %d", gen1, n1.Generation, gen2, n2.Generation, len(n2.Pods))
	}
	c.RemoveNode(st.MakeNode().Name("n1").Obj())
	c.UpdateSnapshot(s)
	if _, err := s.Get("n1"); err == nil || s.NumNodes() != 1 {
		t.Errorf("removed node still listed: %v", names(s))
	}
}

func TestPodsOfAnUnknownNodeWaitForIt(t *testing.T) {
	c := cache.New(nil)
	c.AddPod(st.MakePod().Name("p").Req("1", "").Node("late").Obj())
	s := cache.NewEmptySnapshot()
	c.UpdateSnapshot(s)
	if s.NumNodes() != 0 {
		t.Fatalf("a node without a Node object is listed")
	}
	c.AddNode(st.MakeNode().Name("late").Capacity("2", "1Gi").Obj())
	c.UpdateSnapshot(s)
	ni, err := s.Get("late")
	if err != nil || ni.Requested.MilliCPU != 1000 {
		t.Fatalf("node = %v, %v", ni, err)
	}
}

func TestImageStatesCountNodes(t *testing.T) {
	c := cache.New(nil)
	c.AddNode(st.MakeNode().Name("n1").Image(100, "nginx").Obj())
	c.AddNode(st.MakeNode().Name("n2").Image(100, "nginx:latest").Obj())
	s := cache.NewEmptySnapshot()
	c.UpdateSnapshot(s)
	ni, _ := s.Get("n2")
	if st := ni.ImageStates["nginx:latest"]; st == nil || st.NumNodes != 2 || st.Size != 100 {
		t.Errorf("image state = %+v", st)
	}
}
