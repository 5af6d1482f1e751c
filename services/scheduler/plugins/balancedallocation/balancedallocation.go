// Package balancedallocation prefers nodes whose cpu and memory would be
// used in similar proportions once the pod is there: the score is
// (1 − the standard deviation of the requested/allocatable fractions) × 100.
package balancedallocation

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
	"podline.dev/services/scheduler/internal/framework/runtime"
)

// Name is the plugin's name in profiles.
const Name = "NodeResourcesBalancedAllocation"

const preScoreStateKey framework.StateKey = "PreScore" + Name

// Args are the plugin's pluginConfig args.
type Args struct {
	Resources []ResourceSpec `json:"resources,omitempty"`
}

// ResourceSpec names a resource (its weight is accepted and ignored, as in Kubernetes).
type ResourceSpec struct {
	Name   string `json:"name"`
	Weight int64  `json:"weight,omitempty"`
}

// BalancedAllocation is the PreScore and Score plugin.
type BalancedAllocation struct {
	resources []string
}

var (
	_ framework.PreScorePlugin = (*BalancedAllocation)(nil)
	_ framework.ScorePlugin    = (*BalancedAllocation)(nil)
)

// New builds the plugin.
func New(_ context.Context, raw json.RawMessage, _ framework.Handle) (framework.Plugin, error) {
	var args Args
	if err := runtime.DecodeArgs(raw, &args); err != nil {
		return nil, fmt.Errorf("%s args: %w", Name, err)
	}
	b := &BalancedAllocation{}
	for _, r := range args.Resources {
		b.resources = append(b.resources, r.Name)
	}
	if len(b.resources) == 0 {
		b.resources = []string{framework.ResourceCPU, framework.ResourceMemory}
	}
	return b, nil
}

func (*BalancedAllocation) Name() string { return Name }

type preScoreState struct{ request framework.Resource }

func (s *preScoreState) Clone() framework.StateData { return s }

// PreScore computes the pod's requests; a pod that requests none of the
// resources skips Score (it changes no balance).
func (b *BalancedAllocation) PreScore(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
	r, _ := framework.PodRequests(pod, false)
	requests := false
	for _, name := range b.resources {
		if r.Get(name) > 0 {
			requests = true
		}
	}
	if !requests {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(preScoreStateKey, &preScoreState{request: r})
	return nil
}

// Score is (1 − std(fractions)) × 100.
func (b *BalancedAllocation) Score(_ context.Context, state *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	s, err := framework.ReadAs[*preScoreState](state, preScoreStateKey)
	if err != nil {
		r, _ := framework.PodRequests(pod, false)
		s = &preScoreState{request: r}
	}
	fractions := make([]float64, 0, len(b.resources))
	for _, name := range b.resources {
		alloc := nodeInfo.Allocatable.Get(name)
		if alloc == 0 {
			continue
		}
		f := float64(nodeInfo.Requested.Get(name)+s.request.Get(name)) / float64(alloc)
		fractions = append(fractions, min(f, 1))
	}
	return int64((1 - stdDev(fractions)) * float64(framework.MaxNodeScore)), nil
}

func stdDev(fs []float64) float64 {
	switch len(fs) {
	case 0, 1:
		return 0
	case 2:
		return math.Abs(fs[0]-fs[1]) / 2
	}
	var mean float64
	for _, f := range fs {
		mean += f
	}
	mean /= float64(len(fs))
	var v float64
	for _, f := range fs {
		v += (f - mean) * (f - mean)
	}
	return math.Sqrt(v / float64(len(fs)))
}

func (*BalancedAllocation) ScoreExtensions() framework.ScoreExtensions { return nil }
