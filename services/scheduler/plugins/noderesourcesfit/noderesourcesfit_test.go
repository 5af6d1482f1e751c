package noderesourcesfit

import (
	"context"
	"encoding/json"
	"testing"

	"podline.dev/services/scheduler/internal/framework"
	st "podline.dev/services/scheduler/testing"
)

func TestFilter(t *testing.T) {
	node := st.MakeNode().Name("n1").Resources(map[string]string{"cpu": "2", "memory": "4Gi", "pods": "3", "example.com/gpu": "1"}).Obj()
	existing := []*st.PodWrapper{st.MakePod().Name("e1").Node("n1").Req("1500m", "1Gi")}
	tests := []struct {
		name     string
		pod      *st.PodWrapper
		existing []*st.PodWrapper
		want     *framework.Status
	}{
		{name: "fits", pod: st.MakePod().Name("p").Req("500m", "1Gi"), existing: existing},
		{name: "no requests always fit", pod: st.MakePod().Name("p").Container("nginx"), existing: existing},
		{name: "insufficient cpu", pod: st.MakePod().Name("p").Req("600m", "1Gi"), existing: existing,
			want: framework.NewStatus(framework.Unschedulable, "Insufficient cpu")},
		{name: "insufficient cpu and memory", pod: st.MakePod().Name("p").Req("1", "3584Mi"), existing: existing,
			want: framework.NewStatus(framework.Unschedulable, "Insufficient cpu", "Insufficient memory")},
		{name: "extended resource", pod: st.MakePod().Name("p").Res(map[string]string{"example.com/gpu": "2"}),
			want: framework.NewStatus(framework.Unschedulable, "Insufficient example.com/gpu")},
		{name: "too many pods", pod: st.MakePod().Name("p").Container("nginx"),
			existing: []*st.PodWrapper{st.MakePod().Name("a").Node("n1"), st.MakePod().Name("b").Node("n1"), st.MakePod().Name("c").Node("n1")},
			want:     framework.NewStatus(framework.Unschedulable, "Too many pods")},
		{name: "init container larger than the containers", pod: st.MakePod().Name("p").Req("100m", "").InitReq("1", "1Gi", false), existing: existing,
			want: framework.NewStatus(framework.Unschedulable, "Insufficient cpu")},
		{name: "sidecars add to the containers", pod: st.MakePod().Name("p").Req("300m", "").InitReq("300m", "", true), existing: existing,
			want: framework.NewStatus(framework.Unschedulable, "Insufficient cpu")},
		{name: "bad quantity", pod: st.MakePod().Name("p").Req("lots", ""),
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, "invalid resource request: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, _ := NewWithArgs(Args{})
			ni := st.NodeInfo(node)
			for _, p := range tt.existing {
				ni.AddPod(p.Obj())
			}
			state := framework.NewCycleState()
			if _, s := pl.PreFilter(context.Background(), state, tt.pod.Obj(), nil); !s.IsSuccess() {
				if !s.Equal(tt.want) {
					t.Errorf("PreFilter = %v, want %v", s, tt.want)
				}
				return
			}
			if got := pl.Filter(context.Background(), state, tt.pod.Obj(), ni); !got.Equal(tt.want) {
				t.Errorf("Filter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestScore(t *testing.T) {
	empty := st.MakeNode().Name("empty").Capacity("4", "8Gi").Obj()
	half := st.MakeNode().Name("half").Capacity("4", "8Gi").Obj()
	halfPods := []*st.PodWrapper{st.MakePod().Name("h").Node("half").Req("2", "4Gi")}
	pod := st.MakePod().Name("p").Req("1", "2Gi").Obj()
	tests := []struct {
		name     string
		args     string
		want     map[string]int64
		emptyPod bool
	}{
		// LeastAllocated: empty node: cpu (4-1)/4=75, mem 75 → 75; half node: (4-3)/4=25 → 25.
		{name: "least allocated (default)", want: map[string]int64{"empty": 75, "half": 25}},
		{name: "most allocated", args: `{"scoringStrategy":{"type":"MostAllocated"}}`, want: map[string]int64{"empty": 25, "half": 75}},
		{name: "weights", args: `{"scoringStrategy":{"type":"LeastAllocated","resources":[{"name":"cpu","weight":3},{"name":"memory","weight":1}]}}`,
			want: map[string]int64{"empty": 75, "half": 25}},
		// A pod without requests counts as 100m/200Mi: (4000-100)/4000 = 97.5 → 97; mem (8192-200)/8192 = 97.5 → 97.
		{name: "no requests count as defaults", emptyPod: true, want: map[string]int64{"empty": 97}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plugin, err := New(context.Background(), json.RawMessage(tt.args), nil)
			if err != nil {
				t.Fatal(err)
			}
			pl := plugin.(*Fit)
			p := pod
			if tt.emptyPod {
				p = st.MakePod().Name("q").Container("nginx").Obj()
			}
			state := framework.NewCycleState()
			pl.PreFilter(context.Background(), state, p, nil)
			nis := map[string]*framework.NodeInfo{"empty": st.NodeInfo(empty), "half": st.NodeInfo(half)}
			for _, hp := range halfPods {
				nis["half"].AddPod(hp.Obj())
			}
			for name, want := range tt.want {
				got, s := pl.Score(context.Background(), state, p, nis[name])
				if !s.IsSuccess() || got != want {
					t.Errorf("%s: %d (%v), want %d", name, got, s, want)
				}
			}
		})
	}
}

func TestUnsupportedStrategy(t *testing.T) {
	if _, err := New(context.Background(), json.RawMessage(`{"scoringStrategy":{"type":"RequestedToCapacityRatio"}}`), nil); err == nil {
		t.Error("want an error")
	}
	if _, err := New(context.Background(), json.RawMessage(`{"unknown":1}`), nil); err == nil {
		t.Error("want an error for an unknown field")
	}
}
