// Package tainttoleration filters out nodes with a NoSchedule or NoExecute
// taint the pod does not tolerate, and prefers nodes with fewer
// PreferNoSchedule taints the pod does not tolerate.
package tainttoleration

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
	"podline.dev/services/scheduler/plugins/helper"
)

// Name is the plugin's name in profiles.
const Name = "TaintToleration"

// ErrReasonNotMatch is the reason's format: "node(s) had untolerated taint {key: value}".
const ErrReasonNotMatch = "node(s) had untolerated taint {%s: %s}"

const preScoreStateKey framework.StateKey = "PreScore" + Name

// TaintToleration is the Filter, PreScore and Score plugin.
type TaintToleration struct {
	handle framework.Handle

	mu         sync.RWMutex
	rejections map[taintKey]*framework.Status
}

type taintKey struct{ key, value string }

// maxCachedRejections bounds the rejection statuses kept.
const maxCachedRejections = 1024

var (
	_ framework.FilterPlugin      = (*TaintToleration)(nil)
	_ framework.PreScorePlugin    = (*TaintToleration)(nil)
	_ framework.ScorePlugin       = (*TaintToleration)(nil)
	_ framework.EnqueueExtensions = (*TaintToleration)(nil)
)

// New builds the plugin.
func New(_ context.Context, _ json.RawMessage, h framework.Handle) (framework.Plugin, error) {
	return &TaintToleration{handle: h, rejections: map[taintKey]*framework.Status{}}, nil
}

func (*TaintToleration) Name() string { return Name }

// EventsToRegister: a node added, or its taints changed, such that the pod
// now tolerates every taint it did not.
func (*TaintToleration) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{{
		Event:          framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint},
		QueueingHintFn: isSchedulableAfterNodeChange,
	}}, nil
}

func isSchedulableAfterNodeChange(pod *corev1.Pod, oldObj, newObj object.Object) (framework.QueueingHint, error) {
	newNode, ok := newObj.(*corev1.Node)
	if !ok {
		return framework.QueueSkip, nil
	}
	tol := pod.GetSpec().GetTolerations()
	wasUntolerated := true
	if oldNode, ok := oldObj.(*corev1.Node); ok && oldNode != nil {
		_, wasUntolerated = helper.FindMatchingUntoleratedTaint(oldNode.GetSpec().GetTaints(), tol, helper.DoNotScheduleTaints)
	}
	_, isUntolerated := helper.FindMatchingUntoleratedTaint(newNode.GetSpec().GetTaints(), tol, helper.DoNotScheduleTaints)
	if wasUntolerated && !isUntolerated {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// Filter rejects a node with an untolerated NoSchedule/NoExecute taint.
func (pl *TaintToleration) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	taint, untolerated := helper.FindMatchingUntoleratedTaint(nodeInfo.Node().GetSpec().GetTaints(), pod.GetSpec().GetTolerations(), helper.DoNotScheduleTaints)
	if !untolerated {
		return nil
	}
	return pl.rejection(taint)
}

// rejection is the status for an untolerated taint, built once per taint
// key and value: Filter meets the same taints on node after node.
func (pl *TaintToleration) rejection(taint *corev1.Taint) *framework.Status {
	k := taintKey{taint.GetKey(), taint.GetValue()}
	pl.mu.RLock()
	st, ok := pl.rejections[k]
	pl.mu.RUnlock()
	if ok {
		return st
	}
	st = framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf(ErrReasonNotMatch, k.key, k.value)).WithPlugin(Name)
	pl.mu.Lock()
	if len(pl.rejections) < maxCachedRejections {
		pl.rejections[k] = st
	}
	pl.mu.Unlock()
	return st
}

type preScoreState []*corev1.Toleration

func (s preScoreState) Clone() framework.StateData { return s }

// PreScore keeps the tolerations that matter for PreferNoSchedule taints.
func (*TaintToleration) PreScore(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
	var tol preScoreState
	for _, t := range pod.GetSpec().GetTolerations() {
		if t.GetEffect() == "" || t.GetEffect() == helper.TaintEffectPreferNoSchedule {
			tol = append(tol, t)
		}
	}
	state.Write(preScoreStateKey, tol)
	return nil
}

// Score counts the PreferNoSchedule taints the pod does not tolerate (fewer is better after normalizing).
func (*TaintToleration) Score(_ context.Context, state *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	tol, err := framework.ReadAs[preScoreState](state, preScoreStateKey)
	if err != nil {
		return 0, framework.AsStatus(fmt.Errorf("reading %q from cycleState: %w", preScoreStateKey, err))
	}
	var n int64
	for _, taint := range nodeInfo.Node().GetSpec().GetTaints() {
		if taint.GetEffect() == helper.TaintEffectPreferNoSchedule && !helper.TolerationsTolerateTaint(tol, taint) {
			n++
		}
	}
	return n, nil
}

func (pl *TaintToleration) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore reverses the counts: no untolerated taint scores 100.
func (*TaintToleration) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, scores framework.NodeScoreList) *framework.Status {
	return helper.DefaultNormalizeScore(framework.MaxNodeScore, true, scores)
}
