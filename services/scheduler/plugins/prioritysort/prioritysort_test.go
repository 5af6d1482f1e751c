package prioritysort

import (
	"testing"
	"time"

	"podline.dev/services/scheduler/internal/framework"
	st "podline.dev/services/scheduler/testing"
)

func TestLess(t *testing.T) {
	t0 := time.Unix(1000, 0)
	q := func(p *st.PodWrapper, queued time.Time) *framework.QueuedPodInfo {
		return &framework.QueuedPodInfo{PodInfo: framework.NewPodInfo(p.Obj()), Timestamp: queued}
	}
	tests := []struct {
		name string
		a, b *framework.QueuedPodInfo
		want bool
	}{
		{"higher priority first", q(st.MakePod().Name("a").Priority(10).Created(200), t0), q(st.MakePod().Name("b").Priority(5).Created(100), t0), true},
		{"lower priority later", q(st.MakePod().Name("a").Priority(5), t0), q(st.MakePod().Name("b").Priority(10), t0), false},
		{"equal priority: older pod first", q(st.MakePod().Name("a").Created(100), t0.Add(time.Second)), q(st.MakePod().Name("b").Created(200), t0), true},
		{"equal priority and age: queued first", q(st.MakePod().Name("a").Created(100), t0), q(st.MakePod().Name("b").Created(100), t0.Add(time.Second)), true},
		{"unset priority is 0", q(st.MakePod().Name("a"), t0), q(st.MakePod().Name("b").Priority(-1), t0), true},
	}
	pl := &PrioritySort{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pl.Less(tt.a, tt.b); got != tt.want {
				t.Errorf("Less = %v, want %v", got, tt.want)
			}
		})
	}
}
