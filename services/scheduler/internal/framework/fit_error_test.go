package framework

import "testing"

func TestFitErrorMessage(t *testing.T) {
	taint := NewStatus(UnschedulableAndUnresolvable, "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }")
	cpu := NewStatus(Unschedulable, "Insufficient cpu")
	cpuMem := NewStatus(Unschedulable, "Insufficient cpu", "Insufficient memory")
	tests := []struct {
		name string
		err  FitError
		want string
	}{
		{
			name: "reasons are counted per node and sorted",
			err:  FitError{NumAllNodes: 3, Diagnosis: Diagnosis{NodeToStatus: NodeToStatus{"cp": taint, "n1": cpu, "n2": cpuMem}}},
			want: "0/3 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 Insufficient cpu.",
		},
		{
			name: "the PostFilter message follows with one period",
			err: FitError{NumAllNodes: 3, Diagnosis: Diagnosis{NodeToStatus: NodeToStatus{"cp": taint, "n1": cpu, "n2": cpu},
				PostFilterMsg: "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."}},
			want: "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
		},
		{
			name: "a PreFilter rejection replaces the per-node reasons",
			err: FitError{NumAllNodes: 2, Diagnosis: Diagnosis{PreFilterMsg: "node(s) didn't satisfy plugin NodeAffinity",
				NodeToStatus: NodeToStatus{"a": cpu, "b": cpu}}},
			want: "0/2 nodes are available: node(s) didn't satisfy plugin NodeAffinity.",
		},
		{
			name: "PostFilter that is not preemption",
			err:  FitError{NumAllNodes: 1, Diagnosis: Diagnosis{NodeToStatus: NodeToStatus{"a": cpu}, PostFilterMsg: "preemption: not eligible due to preemptionPolicy=Never."}},
			want: "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestStatus(t *testing.T) {
	var s *Status
	if !s.IsSuccess() || s.Code() != Success || s.Message() != "" || s.AsError() != nil {
		t.Error("nil status is not Success")
	}
	s = NewStatus(Unschedulable, "a", "b").WithPlugin("P")
	if !s.IsRejected() || s.Message() != "a, b" || s.Plugin() != "P" || s.AsError().Error() != "a, b" {
		t.Errorf("status = %v", s)
	}
	if !NewStatus(Skip).IsSkip() || NewStatus(Skip).AsError() != nil {
		t.Error("Skip")
	}
}

func TestResourceParsingAndPodRequests(t *testing.T) {
	r, err := NewResource(map[string]string{"cpu": "250m", "memory": "64Mi", "pods": "110", "example.com/gpu": "2"})
	if err != nil || r.MilliCPU != 250 || r.Memory != 64<<20 || r.AllowedPodNumber != 110 || r.ScalarResources["example.com/gpu"] != 2 {
		t.Errorf("resource = %+v, %v", r, err)
	}
	if _, err := NewResource(map[string]string{"cpu": "x"}); err == nil {
		t.Error("bad quantity accepted")
	}
}
