package scheduler

import (
	"context"
	"sync"
	"sync/atomic"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
	"podline.dev/services/scheduler/internal/framework/runtime"
)

// Kubernetes' bounds on how many feasible nodes to look for.
const (
	minFeasibleNodesToFind           = 100
	minFeasibleNodesPercentageToFind = 5
)

// ScheduleResult is the outcome of the scheduling algorithm.
type ScheduleResult struct {
	SuggestedHost  string
	EvaluatedNodes int
	FeasibleNodes  int
	nominatingInfo *framework.NominatingInfo
}

// cycleTrace collects what the spans report about one attempt.
type cycleTrace struct {
	filtered  []*framework.NodeInfo
	diagnosis framework.Diagnosis
	scores    []runtime.NodePluginScores
}

// schedulePod runs the algorithm on a fresh snapshot: filter, then score.
func (s *Scheduler) schedulePod(ctx context.Context, fw *runtime.Framework, state *framework.CycleState, pod *corev1.Pod, tr *cycleTrace) (ScheduleResult, error) {
	s.Cache.UpdateSnapshot(s.snapshot)
	if s.snapshot.NumNodes() == 0 {
		return ScheduleResult{}, framework.ErrNoNodesAvailable
	}
	feasible, diagnosis, err := s.findNodesThatFitPod(ctx, fw, state, pod)
	tr.filtered, tr.diagnosis = feasible, diagnosis
	if err != nil {
		return ScheduleResult{}, err
	}
	if len(feasible) == 0 {
		return ScheduleResult{}, &framework.FitError{Pod: pod, NumAllNodes: s.snapshot.NumNodes(), Diagnosis: diagnosis}
	}
	evaluated := diagnosis.EvaluatedNodes
	if len(feasible) == 1 {
		return ScheduleResult{SuggestedHost: feasible[0].Name(), EvaluatedNodes: evaluated, FeasibleNodes: 1}, nil
	}
	scores, err := s.prioritizeNodes(ctx, fw, state, pod, feasible)
	if err != nil {
		return ScheduleResult{}, err
	}
	tr.scores = scores
	return ScheduleResult{SuggestedHost: s.selectHost(scores), EvaluatedNodes: evaluated, FeasibleNodes: len(feasible)}, nil
}

// findNodesThatFitPod runs PreFilter and Filter.
func (s *Scheduler) findNodesThatFitPod(ctx context.Context, fw *runtime.Framework, state *framework.CycleState, pod *corev1.Pod) ([]*framework.NodeInfo, framework.Diagnosis, error) {
	diagnosis := framework.Diagnosis{NodeToStatus: framework.NodeToStatus{}}
	all := s.snapshot.List()
	pctx, span := startSpan(ctx, "PreFilter")
	pre, status := fw.RunPreFilterPlugins(pctx, state, pod, all)
	endSpan(span, status)
	if !status.IsSuccess() {
		if !status.IsRejected() {
			return nil, diagnosis, status.AsError()
		}
		diagnosis.PreFilterMsg = status.Message()
		for _, ni := range all {
			diagnosis.NodeToStatus[ni.Name()] = status
		}
		diagnosis.AddPlugin(status)
		return nil, diagnosis, nil
	}
	// A pod nominated by an earlier preemption tries its node first.
	if nom := pod.GetStatus().GetNominatedNodeName(); nom != "" {
		if ni, err := s.snapshot.Get(nom); err == nil {
			feasible, err := s.findNodesThatPassFilters(ctx, fw, state, pod, &diagnosis, []*framework.NodeInfo{ni})
			if err != nil {
				return nil, diagnosis, err
			}
			if len(feasible) > 0 {
				return feasible, diagnosis, nil
			}
			diagnosis = framework.Diagnosis{NodeToStatus: framework.NodeToStatus{}}
		}
	}
	nodes := all
	if !pre.AllNodes() {
		nodes = make([]*framework.NodeInfo, 0, len(pre.NodeNames))
		for _, ni := range all {
			if pre.NodeNames[ni.Name()] {
				nodes = append(nodes, ni)
			}
		}
	}
	feasible, err := s.findNodesThatPassFilters(ctx, fw, state, pod, &diagnosis, nodes)
	return feasible, diagnosis, err
}

// findNodesThatPassFilters filters nodes in parallel, starting where the
// last cycle stopped, until enough feasible nodes are found.
func (s *Scheduler) findNodesThatPassFilters(ctx context.Context, fw *runtime.Framework, state *framework.CycleState, pod *corev1.Pod, diagnosis *framework.Diagnosis, nodes []*framework.NodeInfo) ([]*framework.NodeInfo, error) {
	n := len(nodes)
	if n == 0 {
		return nil, nil
	}
	want := s.numFeasibleNodesToFind(fw.PercentageOfNodesToScore(), n)
	start := s.nextStartNodeIndex % n
	if !fw.HasFilterPlugins() {
		out := make([]*framework.NodeInfo, want)
		for i := range out {
			out[i] = nodes[(start+i)%n]
		}
		s.nextStartNodeIndex = (start + want) % n
		return out, nil
	}
	ctx, span := startSpan(ctx, "Filter")
	defer span.End()
	// The buffers are reused: the cycle is serial, and nothing keeps them after it.
	feasible := grow(&s.scratch.feasible, want)
	statuses := grow(&s.scratch.statuses, n)
	var found atomic.Int32
	var errOnce sync.Once
	var firstErr error
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fw.Parallelizer().Until(ctx, n, func(i int) {
		ni := nodes[(start+i)%n]
		st := fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
		switch {
		case st.IsSuccess():
			k := found.Add(1)
			if int(k) > want {
				found.Add(-1)
				cancel()
				return
			}
			feasible[k-1] = ni
		case st.Code() == framework.Error:
			errOnce.Do(func() { firstErr = st.AsError() })
			cancel()
		default:
			statuses[i] = st
		}
	})
	feasible = feasible[:found.Load()]
	processed := len(feasible)
	// The per-node statuses matter when no node fits (the FitError and
	// preemption) or when the span shows them; otherwise only count them.
	keep := len(feasible) == 0 || span.IsRecording()
	for i, st := range statuses {
		if st == nil {
			continue
		}
		processed++
		if keep {
			diagnosis.NodeToStatus[nodes[(start+i)%n].Name()] = st
			diagnosis.AddPlugin(st)
		}
	}
	s.nextStartNodeIndex = (start + processed) % n
	diagnosis.EvaluatedNodes += processed
	if span.IsRecording() {
		annotateFilter(span, s.topN, n, feasible, diagnosis.NodeToStatus)
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return feasible, nil
}

// numFeasibleNodesToFind is Kubernetes' formula: all nodes below 100;
// otherwise percentageOfNodesToScore (adaptive when 0: 50 − nodes/125, at
// least 5) of them, at least 100.
func (s *Scheduler) numFeasibleNodesToFind(profilePercentage *int32, numAllNodes int) int {
	return NumFeasibleNodesToFind(profilePercentage, s.cfg.PercentageOfNodesToScore, numAllNodes)
}

// NumFeasibleNodesToFind is the formula, with the profile's setting winning over the global one.
func NumFeasibleNodesToFind(profilePercentage, globalPercentage *int32, numAllNodes int) int {
	if numAllNodes < minFeasibleNodesToFind {
		return numAllNodes
	}
	var pct int32
	if globalPercentage != nil {
		pct = *globalPercentage
	}
	if profilePercentage != nil {
		pct = *profilePercentage
	}
	if pct == 0 {
		pct = int32(50 - numAllNodes/125)
		pct = max(pct, minFeasibleNodesPercentageToFind)
	}
	num := numAllNodes * int(pct) / 100
	return max(num, minFeasibleNodesToFind)
}

// prioritizeNodes runs PreScore and Score.
func (s *Scheduler) prioritizeNodes(ctx context.Context, fw *runtime.Framework, state *framework.CycleState, pod *corev1.Pod, nodes []*framework.NodeInfo) ([]runtime.NodePluginScores, error) {
	if !fw.HasScorePlugins() {
		out := make([]runtime.NodePluginScores, len(nodes))
		for i, ni := range nodes {
			out[i] = runtime.NodePluginScores{Name: ni.Name(), TotalScore: 1}
		}
		return out, nil
	}
	pctx, span := startSpan(ctx, "PreScore")
	st := fw.RunPreScorePlugins(pctx, state, pod, nodes)
	endSpan(span, st)
	if !st.IsSuccess() {
		return nil, st.AsError()
	}
	sctx, span := startSpan(ctx, "Score")
	scores, st := fw.RunScorePlugins(sctx, state, pod, nodes)
	if span.IsRecording() && st.IsSuccess() {
		annotateScores(span, s.topN, scores)
	}
	endSpan(span, st)
	if !st.IsSuccess() {
		return nil, st.AsError()
	}
	return scores, nil
}

// selectHost picks the highest total score, breaking ties uniformly at random.
func (s *Scheduler) selectHost(scores []runtime.NodePluginScores) string {
	best, ties := 0, 1
	for i := 1; i < len(scores); i++ {
		switch {
		case scores[i].TotalScore > scores[best].TotalScore:
			best, ties = i, 1
		case scores[i].TotalScore == scores[best].TotalScore:
			ties++
			if s.rand.IntN(ties) == 0 {
				best = i
			}
		}
	}
	return scores[best].Name
}

// grow returns (*buf)[:n] cleared, reallocating when it is too small.
func grow[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n, n+n/4)
	}
	out := (*buf)[:n]
	clear(out)
	return out
}
