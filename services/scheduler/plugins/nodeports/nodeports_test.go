package nodeports

import (
	"context"
	"testing"

	"podline.dev/services/scheduler/internal/framework"
	st "podline.dev/services/scheduler/testing"
)

func TestFilter(t *testing.T) {
	node := st.MakeNode().Name("n1").Obj()
	conflict := framework.NewStatus(framework.Unschedulable, "node(s) didn't have free ports for the requested pod ports")
	tests := []struct {
		name     string
		pod      *st.PodWrapper
		existing []*st.PodWrapper
		want     *framework.Status
		skip     bool
	}{
		{name: "no host ports skips", pod: st.MakePod().Name("a").Req("1", ""), skip: true},
		{name: "free port", pod: st.MakePod().Name("a").HostPort(8080, "", ""),
			existing: []*st.PodWrapper{st.MakePod().Name("b").Node("n1").HostPort(9090, "", "")}},
		{name: "same port and protocol on all IPs", pod: st.MakePod().Name("a").HostPort(8080, "TCP", ""),
			existing: []*st.PodWrapper{st.MakePod().Name("b").Node("n1").HostPort(8080, "", "")}, want: conflict},
		{name: "same port, other protocol", pod: st.MakePod().Name("a").HostPort(8080, "UDP", ""),
			existing: []*st.PodWrapper{st.MakePod().Name("b").Node("n1").HostPort(8080, "TCP", "")}},
		{name: "same port, other specific IPs", pod: st.MakePod().Name("a").HostPort(8080, "TCP", "10.0.0.1"),
			existing: []*st.PodWrapper{st.MakePod().Name("b").Node("n1").HostPort(8080, "TCP", "10.0.0.2")}},
		{name: "specific IP against 0.0.0.0", pod: st.MakePod().Name("a").HostPort(8080, "TCP", "10.0.0.1"),
			existing: []*st.PodWrapper{st.MakePod().Name("b").Node("n1").HostPort(8080, "TCP", "")}, want: conflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := &NodePorts{}
			state := framework.NewCycleState()
			_, s := pl.PreFilter(context.Background(), state, tt.pod.Obj(), nil)
			if tt.skip {
				if !s.IsSkip() {
					t.Fatalf("PreFilter = %v, want Skip", s)
				}
				return
			}
			var pods []*st.PodWrapper
			pods = append(pods, tt.existing...)
			ni := st.NodeInfo(node)
			for _, p := range pods {
				ni.AddPod(p.Obj())
			}
			if got := pl.Filter(context.Background(), state, tt.pod.Obj(), ni); !got.Equal(tt.want) {
				t.Errorf("Filter = %v, want %v", got, tt.want)
			}
		})
	}
}
