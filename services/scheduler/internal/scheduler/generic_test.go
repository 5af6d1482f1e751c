package scheduler

import "testing"

func TestNumFeasibleNodesToFind(t *testing.T) {
	p := func(v int32) *int32 { return &v }
	tests := []struct {
		name            string
		profile, global *int32
		nodes, want     int
	}{
		{name: "fewer than 100 nodes: all", nodes: 99, want: 99},
		{name: "100 nodes, adaptive 50%, at least 100", nodes: 100, want: 100},
		{name: "1000 nodes: 50 − 1000/125 = 42%", nodes: 1000, want: 420},
		{name: "5000 nodes: 10%", nodes: 5000, want: 500},
		{name: "6000 nodes: 2% floors to 5%", nodes: 6000, want: 300},
		{name: "global 30%", global: p(30), nodes: 1000, want: 300},
		{name: "profile wins over global", global: p(30), profile: p(70), nodes: 1000, want: 700},
		{name: "1% of 1000 is raised to 100", global: p(1), nodes: 1000, want: 100},
		{name: "100%", profile: p(100), nodes: 1000, want: 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NumFeasibleNodesToFind(tt.profile, tt.global, tt.nodes); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}
