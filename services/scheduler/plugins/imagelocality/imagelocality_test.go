package imagelocality

import (
	"context"
	"testing"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
	st "podline.dev/services/scheduler/testing"
)

func TestScore(t *testing.T) {
	const mb = 1024 * 1024
	nodes := []*corev1.Node{
		st.MakeNode().Name("big").Image(500*mb, "registry.podline:5000/demo/web:1.0").Image(300*mb, "docker.io/library/redis:latest").Obj(),
		st.MakeNode().Name("small").Image(10*mb, "docker.io/library/redis:latest").Obj(),
		st.MakeNode().Name("none").Obj(),
	}
	snap := st.Snapshot(nodes, nil)
	pl := &ImageLocality{handle: st.NewHandle(snap)}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want map[string]int64
	}{
		{"one big image on one of three nodes", st.MakePod().Name("p").Container("registry.podline:5000/demo/web:1.0").Obj(),
			// 500 MB × 1/3 nodes = 166 MB: (166-23)/(1000-23) ≈ 14.
			map[string]int64{"big": 14, "small": 0, "none": 0}},
		{"untagged image name is :latest", st.MakePod().Name("p").Container("docker.io/library/redis").Obj(),
			// Both big and small report redis; the summary keeps the first size seen (300 MB), on 2 of 3 nodes.
			map[string]int64{"big": 18, "small": 18, "none": 0}},
		{"no images present", st.MakePod().Name("p").Container("nginx").Obj(), map[string]int64{"big": 0, "small": 0, "none": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, ni := range snap.List() {
				got, s := pl.Score(context.Background(), framework.NewCycleState(), tt.pod, ni)
				if !s.IsSuccess() {
					t.Fatal(s)
				}
				if got != tt.want[ni.Name()] {
					t.Errorf("%s: %d, want %d", ni.Name(), got, tt.want[ni.Name()])
				}
			}
		})
	}
}
