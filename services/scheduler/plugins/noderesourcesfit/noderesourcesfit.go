// Package noderesourcesfit filters out nodes whose allocatable resources,
// minus what the pods already there request, cannot hold the pod's
// requests ("Insufficient cpu", "Too many pods"), and scores the rest by a
// scoring strategy: LeastAllocated (the default: prefer emptier nodes) or
// MostAllocated (bin packing).
package noderesourcesfit

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
	"podline.dev/services/scheduler/internal/framework/runtime"
)

// Name is the plugin's name in profiles.
const Name = "NodeResourcesFit"

// Scoring strategies.
const (
	LeastAllocated = "LeastAllocated"
	MostAllocated  = "MostAllocated"
)

// ReasonTooManyPods is Kubernetes' reason when the node's pod count is full;
// other reasons are "Insufficient <resource>".
const ReasonTooManyPods = "Too many pods"

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// ResourceSpec is a resource and its weight in scoring.
type ResourceSpec struct {
	Name   string `json:"name"`
	Weight int64  `json:"weight,omitempty"`
}

// ScoringStrategy selects how feasible nodes are ranked.
type ScoringStrategy struct {
	Type      string         `json:"type,omitempty"`
	Resources []ResourceSpec `json:"resources,omitempty"`
}

// Args are the plugin's pluginConfig args.
type Args struct {
	IgnoredResources []string         `json:"ignoredResources,omitempty"`
	ScoringStrategy  *ScoringStrategy `json:"scoringStrategy,omitempty"`
}

// Fit is the PreFilter, Filter and Score plugin.
type Fit struct {
	ignored   map[string]bool
	strategy  string
	resources []ResourceSpec
}

var (
	_ framework.PreFilterPlugin   = (*Fit)(nil)
	_ framework.FilterPlugin      = (*Fit)(nil)
	_ framework.ScorePlugin       = (*Fit)(nil)
	_ framework.EnqueueExtensions = (*Fit)(nil)
)

// New builds the plugin from its args.
func New(_ context.Context, raw json.RawMessage, _ framework.Handle) (framework.Plugin, error) {
	args := Args{ScoringStrategy: &ScoringStrategy{}}
	if err := runtime.DecodeArgs(raw, &args); err != nil {
		return nil, fmt.Errorf("%s args: %w", Name, err)
	}
	return NewWithArgs(args)
}

// NewWithArgs builds the plugin (tests, benchmarks).
func NewWithArgs(args Args) (*Fit, error) {
	s := args.ScoringStrategy
	if s == nil {
		s = &ScoringStrategy{}
	}
	f := &Fit{ignored: map[string]bool{}, strategy: s.Type, resources: s.Resources}
	if f.strategy == "" {
		f.strategy = LeastAllocated
	}
	if f.strategy != LeastAllocated && f.strategy != MostAllocated {
		return nil, fmt.Errorf("%s args: scoring strategy %q is not supported (LeastAllocated, MostAllocated)", Name, f.strategy)
	}
	if len(f.resources) == 0 {
		f.resources = []ResourceSpec{{Name: framework.ResourceCPU, Weight: 1}, {Name: framework.ResourceMemory, Weight: 1}}
	}
	for i := range f.resources {
		if f.resources[i].Weight == 0 {
			f.resources[i].Weight = 1
		}
	}
	for _, r := range args.IgnoredResources {
		f.ignored[r] = true
	}
	return f, nil
}

func (*Fit) Name() string { return Name }

type preFilterState struct {
	request framework.Resource
	// nonZero counts missing cpu/memory requests as the scoring defaults.
	nonZero framework.Resource
}

func (s *preFilterState) Clone() framework.StateData { return s }

// PreFilter computes the pod's requests once.
func (*Fit) PreFilter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	r, err := framework.PodRequests(pod, false)
	if err != nil {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("invalid resource request: %v", err))
	}
	nz, _ := framework.PodRequests(pod, true)
	state.Write(preFilterStateKey, &preFilterState{request: r, nonZero: nz})
	return nil, nil
}

func (*Fit) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter rejects a node that cannot hold the pod, with one reason per short resource.
func (f *Fit) Filter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := framework.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil {
		r, _ := framework.PodRequests(pod, false)
		s = &preFilterState{request: r}
	}
	if reasons := f.InsufficientResources(s.request, nodeInfo); len(reasons) > 0 {
		return framework.NewStatus(framework.Unschedulable, reasons...)
	}
	return nil
}

// InsufficientResources lists Kubernetes' reasons why req does not fit the node.
func (f *Fit) InsufficientResources(req framework.Resource, nodeInfo *framework.NodeInfo) []string {
	var reasons []string
	alloc, used := nodeInfo.Allocatable, nodeInfo.Requested
	if int64(len(nodeInfo.Pods))+1 > alloc.AllowedPodNumber {
		reasons = append(reasons, ReasonTooManyPods)
	}
	check := func(name string, want, have, inUse int64) {
		if want > 0 && !f.ignored[name] && want > have-inUse {
			reasons = append(reasons, "Insufficient "+name)
		}
	}
	check(framework.ResourceCPU, req.MilliCPU, alloc.MilliCPU, used.MilliCPU)
	check(framework.ResourceMemory, req.Memory, alloc.Memory, used.Memory)
	check(framework.ResourceEphemeralStorage, req.EphemeralStorage, alloc.EphemeralStorage, used.EphemeralStorage)
	names := make([]string, 0, len(req.ScalarResources))
	for n := range req.ScalarResources {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		check(n, req.ScalarResources[n], alloc.ScalarResources[n], used.ScalarResources[n])
	}
	return reasons
}

// Score ranks the node by the strategy over the configured resources,
// counting containers without requests as 100m cpu and 200Mi memory.
func (f *Fit) Score(_ context.Context, state *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	s, err := framework.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil {
		nz, _ := framework.PodRequests(pod, true)
		s = &preFilterState{nonZero: nz}
	}
	return f.score(pod, nodeInfo, s.nonZero), nil
}

func (f *Fit) score(_ *corev1.Pod, nodeInfo *framework.NodeInfo, podReq framework.Resource) int64 {
	var total, weights int64
	for _, r := range f.resources {
		alloc := nodeInfo.Allocatable.Get(r.Name)
		var requested int64
		switch r.Name {
		case framework.ResourceCPU, framework.ResourceMemory:
			requested = nodeInfo.NonZeroRequested.Get(r.Name) + podReq.Get(r.Name)
		default:
			if podReq.Get(r.Name) == 0 {
				continue // the pod does not use it: it does not count
			}
			requested = nodeInfo.Requested.Get(r.Name) + podReq.Get(r.Name)
		}
		if alloc == 0 {
			continue
		}
		var s int64
		if f.strategy == MostAllocated {
			s = min(requested, alloc) * framework.MaxNodeScore / alloc
		} else if requested <= alloc {
			s = (alloc - requested) * framework.MaxNodeScore / alloc
		}
		total += s * r.Weight
		weights += r.Weight
	}
	if weights == 0 {
		return 0
	}
	return total / weights
}

func (f *Fit) ScoreExtensions() framework.ScoreExtensions { return nil }

// EventsToRegister: a node added or given more room, a pod deleted or scaled down.
func (f *Fit) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeAllocatable},
			QueueingHintFn: func(pod *corev1.Pod, _, newObj object.Object) (framework.QueueingHint, error) {
				node, ok := newObj.(*corev1.Node)
				if !ok {
					return framework.QueueSkip, nil
				}
				req, _ := framework.PodRequests(pod, false)
				empty := framework.NewNodeInfo()
				empty.SetNode(node)
				if len(f.InsufficientResources(req, empty)) > 0 {
					return framework.QueueSkip, nil // too small even when empty
				}
				return framework.Queue, nil
			}},
		{Event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete | framework.UpdatePodScaleDown}},
	}, nil
}
