package runtime

import (
	"context"
	"fmt"
	"time"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
)

// RunPreEnqueuePlugins says whether pod may enter the active queue.
func (f *Framework) RunPreEnqueuePlugins(ctx context.Context, pod *corev1.Pod) *framework.Status {
	for _, pl := range f.preEnqueue {
		if s := pl.PreEnqueue(ctx, pod); !s.IsSuccess() {
			s = s.WithPlugin(pl.Name())
			if s.IsRejected() {
				return s
			}
			return framework.AsStatus(fmt.Errorf("running PreEnqueue plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
	}
	return nil
}

// RunPreFilterPlugins runs PreFilter; a rejection applies to every node.
// It records the plugins that returned Skip in state.SkipFilterPlugins.
func (f *Framework) RunPreFilterPlugins(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	var result *framework.PreFilterResult
	var narrowing []string
	skip := map[string]bool{}
	for _, pl := range f.preFilter {
		r, s := pl.PreFilter(ctx, state, pod, nodes)
		if s.IsSkip() {
			skip[pl.Name()] = true
			continue
		}
		if !s.IsSuccess() {
			s = s.WithPlugin(pl.Name())
			if s.IsRejected() {
				return nil, s
			}
			return nil, framework.AsStatus(fmt.Errorf("running PreFilter plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
		if !r.AllNodes() {
			narrowing = append(narrowing, pl.Name())
		}
		result = result.Merge(r)
		if !result.AllNodes() && len(result.NodeNames) == 0 {
			msg := fmt.Sprintf("node(s) didn't satisfy plugin(s) %v simultaneously", narrowing)
			if len(narrowing) == 1 {
				msg = fmt.Sprintf("node(s) didn't satisfy plugin %v", narrowing[0])
			}
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, msg).WithPlugin(narrowing[len(narrowing)-1])
		}
	}
	state.SkipFilterPlugins = skip
	return result, nil
}

// RunPreFilterExtensionAddPod tells PreFilter plugins a pod was added to nodeInfo.
func (f *Framework) RunPreFilterExtensionAddPod(ctx context.Context, state *framework.CycleState, podToSchedule *corev1.Pod, podInfoToAdd *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	for _, pl := range f.preFilter {
		ext := pl.PreFilterExtensions()
		if ext == nil || state.SkipFilterPlugins[pl.Name()] {
			continue
		}
		if s := ext.AddPod(ctx, state, podToSchedule, podInfoToAdd, nodeInfo); !s.IsSuccess() {
			return framework.AsStatus(fmt.Errorf("running AddPod on PreFilter plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
	}
	return nil
}

// RunPreFilterExtensionRemovePod tells PreFilter plugins a pod was removed from nodeInfo.
func (f *Framework) RunPreFilterExtensionRemovePod(ctx context.Context, state *framework.CycleState, podToSchedule *corev1.Pod, podInfoToRemove *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	for _, pl := range f.preFilter {
		ext := pl.PreFilterExtensions()
		if ext == nil || state.SkipFilterPlugins[pl.Name()] {
			continue
		}
		if s := ext.RemovePod(ctx, state, podToSchedule, podInfoToRemove, nodeInfo); !s.IsSuccess() {
			return framework.AsStatus(fmt.Errorf("running RemovePod on PreFilter plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
	}
	return nil
}

// RunFilterPlugins runs the Filter plugins on one node and returns the first rejection.
func (f *Framework) RunFilterPlugins(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	for _, pl := range f.filter {
		if state.SkipFilterPlugins[pl.Name()] {
			continue
		}
		if s := pl.Filter(ctx, state, pod, nodeInfo); !s.IsSuccess() {
			if !s.IsRejected() {
				s = framework.AsStatus(fmt.Errorf("running %q filter plugin: %w", pl.Name(), s.AsError()))
			}
			return s.WithPlugin(pl.Name())
		}
	}
	return nil
}

// RunFilterPluginsWithNominatedPods filters a node as if the pods nominated
// to it with at least the pod's priority were already there, and also
// without them (so that a pod does not fit only thanks to them, e.g. by
// affinity), as Kubernetes does.
func (f *Framework) RunFilterPluginsWithNominatedPods(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	var status *framework.Status
	added := false
	for i := range 2 {
		stateToUse, infoToUse := state, nodeInfo
		if i == 0 {
			var err error
			added, stateToUse, infoToUse, err = f.addNominatedPods(ctx, pod, state, nodeInfo)
			if err != nil {
				return framework.AsStatus(err)
			}
		} else if !added || !status.IsSuccess() {
			break
		}
		status = f.RunFilterPlugins(ctx, stateToUse, pod, infoToUse)
		if !status.IsSuccess() && !status.IsRejected() {
			return status
		}
	}
	return status
}

func (f *Framework) addNominatedPods(ctx context.Context, pod *corev1.Pod, state *framework.CycleState, nodeInfo *framework.NodeInfo) (bool, *framework.CycleState, *framework.NodeInfo, error) {
	if nodeInfo.Node() == nil {
		return false, state, nodeInfo, nil
	}
	nominated := f.nominator.NominatedPodsForNode(nodeInfo.Name())
	if len(nominated) == 0 {
		return false, state, nodeInfo, nil
	}
	var stateOut *framework.CycleState
	var infoOut *framework.NodeInfo
	prio := PodPriority(pod)
	for _, pi := range nominated {
		if PodPriority(pi.Pod) < prio || pi.Pod.GetMetadata().GetUid() == pod.GetMetadata().GetUid() {
			continue
		}
		if infoOut == nil {
			stateOut, infoOut = state.Clone(), nodeInfo.Clone()
		}
		infoOut.AddPodInfo(pi)
		if s := f.RunPreFilterExtensionAddPod(ctx, stateOut, pod, pi, infoOut); !s.IsSuccess() {
			return false, state, nodeInfo, s.AsError()
		}
	}
	if infoOut == nil {
		return false, state, nodeInfo, nil
	}
	return true, stateOut, infoOut, nil
}

// PodPriority is spec.priority, 0 when unset.
func PodPriority(pod *corev1.Pod) int32 { return pod.GetSpec().GetPriority() }

// RunPostFilterPlugins runs PostFilter until one succeeds or fails hard.
func (f *Framework) RunPostFilterPlugins(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, m framework.NodeToStatus) (*framework.PostFilterResult, *framework.Status) {
	var reasons []string
	var result *framework.PostFilterResult
	rejector := ""
	for _, pl := range f.postFilter {
		r, s := pl.PostFilter(ctx, state, pod, m)
		switch {
		case s.IsSuccess():
			return r, s
		case s.Code() == framework.UnschedulableAndUnresolvable:
			return r, s.WithPlugin(pl.Name())
		case !s.IsRejected():
			return nil, framework.AsStatus(s.AsError()).WithPlugin(pl.Name())
		case r != nil && r.NominatingInfo != nil && r.NominatingMode != framework.ModeNoop:
			result = r
		}
		reasons = append(reasons, s.Reasons()...)
		if rejector == "" {
			rejector = pl.Name()
		}
	}
	return result, framework.NewStatus(framework.Unschedulable, reasons...).WithPlugin(rejector)
}

// RunPreScorePlugins runs PreScore and records Skips in state.SkipScorePlugins.
func (f *Framework) RunPreScorePlugins(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodes []*framework.NodeInfo) *framework.Status {
	skip := map[string]bool{}
	for _, pl := range f.preScore {
		s := pl.PreScore(ctx, state, pod, nodes)
		if s.IsSkip() {
			skip[pl.Name()] = true
			continue
		}
		if !s.IsSuccess() {
			return framework.AsStatus(fmt.Errorf("running PreScore plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
	}
	state.SkipScorePlugins = skip
	return nil
}

// PluginScore is one plugin's weighted score of a node.
type PluginScore struct {
	Name  string
	Score int64
}

// NodePluginScores is a node's scores from each plugin and in total.
type NodePluginScores struct {
	Name       string
	Scores     []PluginScore
	TotalScore int64
}

// RunScorePlugins scores every node with every plugin (in parallel over
// nodes), normalizes each plugin's scores, applies the weights and sums.
// The result is valid until the next call: the scheduling cycle is serial,
// and the buffers are reused so that scoring does not feed the GC.
func (f *Framework) RunScorePlugins(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodes []*framework.NodeInfo) ([]NodePluginScores, *framework.Status) {
	f.scoreMu.Lock()
	defer f.scoreMu.Unlock()
	plugins := f.scoreScratch.plugins[:0]
	for _, pl := range f.score {
		if !state.SkipScorePlugins[pl.Name()] {
			plugins = append(plugins, pl)
		}
	}
	f.scoreScratch.plugins = plugins
	np, nn := len(plugins), len(nodes)
	raw := grow(&f.scoreScratch.raw, np*nn)
	scores := f.scoreScratch.lists[:0]
	for i := range np {
		scores = append(scores, raw[i*nn:(i+1)*nn:(i+1)*nn])
	}
	f.scoreScratch.lists = scores
	errs := make(chan *framework.Status, 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fail := func(s *framework.Status) {
		select {
		case errs <- s:
		default:
		}
		cancel()
	}
	f.parallelizer.Until(ctx, nn, func(n int) {
		for i, pl := range plugins {
			s, st := pl.Score(ctx, state, pod, nodes[n])
			if !st.IsSuccess() {
				fail(framework.AsStatus(fmt.Errorf("plugin %q failed with: %w", pl.Name(), st.AsError())).WithPlugin(pl.Name()))
				return
			}
			scores[i][n] = framework.NodeScore{Name: nodes[n].Name(), Score: s}
		}
	})
	if s := firstStatus(errs); s != nil {
		return nil, s
	}
	for i, pl := range plugins {
		if ext := pl.ScoreExtensions(); ext != nil {
			if st := ext.NormalizeScore(ctx, state, pod, scores[i]); !st.IsSuccess() {
				return nil, framework.AsStatus(fmt.Errorf("running Normalize on Score plugins: plugin %q failed with: %w", pl.Name(), st.AsError())).WithPlugin(pl.Name())
			}
		}
	}
	out := grow(&f.scoreScratch.out, nn)
	flat := grow(&f.scoreScratch.flat, nn*np)
	for n := range nodes {
		out[n] = NodePluginScores{Name: nodes[n].Name(), Scores: flat[n*np : (n+1)*np : (n+1)*np]}
		for i, pl := range plugins {
			s := scores[i][n].Score
			if s > framework.MaxNodeScore || s < framework.MinNodeScore {
				return nil, framework.AsStatus(fmt.Errorf("plugin %q returns an invalid score %v, it should in the range of [%v, %v] after normalizing",
					pl.Name(), s, framework.MinNodeScore, framework.MaxNodeScore)).WithPlugin(pl.Name())
			}
			w := s * f.weights[pl.Name()]
			out[n].Scores[i] = PluginScore{Name: pl.Name(), Score: w}
			out[n].TotalScore += w
		}
	}
	return out, nil
}

// grow returns (*buf)[:n], reallocating when it is too small.
func grow[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n, n+n/4)
	}
	s := (*buf)[:n]
	clear(s)
	return s
}

func firstStatus(ch chan *framework.Status) *framework.Status {
	select {
	case s := <-ch:
		return s
	default:
		return nil
	}
}

// RunReservePluginsReserve runs Reserve; on failure the caller runs Unreserve.
func (f *Framework) RunReservePluginsReserve(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeName string) *framework.Status {
	for _, pl := range f.reserve {
		if s := pl.Reserve(ctx, state, pod, nodeName); !s.IsSuccess() {
			if s.IsRejected() {
				return s.WithPlugin(pl.Name())
			}
			return framework.AsStatus(fmt.Errorf("running Reserve plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
	}
	return nil
}

// RunReservePluginsUnreserve runs Unreserve in reverse order.
func (f *Framework) RunReservePluginsUnreserve(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeName string) {
	for i := len(f.reserve) - 1; i >= 0; i-- {
		f.reserve[i].Unreserve(ctx, state, pod, nodeName)
	}
}

// RunPermitPlugins runs Permit; Wait registers the pod as waiting.
func (f *Framework) RunPermitPlugins(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeName string) *framework.Status {
	waits := map[string]time.Duration{}
	for _, pl := range f.permit {
		s, timeout := pl.Permit(ctx, state, pod, nodeName)
		if s.IsSuccess() {
			continue
		}
		switch {
		case s.IsRejected():
			return s.WithPlugin(pl.Name())
		case s.IsWait():
			waits[pl.Name()] = min(timeout, maxPermitTimeout)
		default:
			return framework.AsStatus(fmt.Errorf("running Permit plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
	}
	if len(waits) > 0 {
		f.waiting.add(newWaitingPod(pod, waits))
		return framework.NewStatus(framework.Wait, fmt.Sprintf("one or more plugins asked to wait and no plugin rejected pod %q", pod.GetMetadata().GetName()))
	}
	return nil
}

// WaitOnPermit blocks until a waiting pod is allowed or rejected (binding cycle).
func (f *Framework) WaitOnPermit(ctx context.Context, pod *corev1.Pod) *framework.Status {
	uid := pod.GetMetadata().GetUid()
	wp := f.waiting.get(uid)
	if wp == nil {
		return nil
	}
	defer f.waiting.remove(uid)
	select {
	case s := <-wp.result:
		if s.IsSuccess() {
			return nil
		}
		if s.IsRejected() {
			return s
		}
		return framework.AsStatus(fmt.Errorf("waiting on permit for pod: %w", s.AsError())).WithPlugin(s.Plugin())
	case <-ctx.Done():
		return framework.AsStatus(ctx.Err())
	}
}

// RunPreBindPlugins runs PreBind.
func (f *Framework) RunPreBindPlugins(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeName string) *framework.Status {
	for _, pl := range f.preBind {
		if s := pl.PreBind(ctx, state, pod, nodeName); !s.IsSuccess() {
			if s.IsRejected() {
				return s.WithPlugin(pl.Name())
			}
			return framework.AsStatus(fmt.Errorf("running PreBind plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
	}
	return nil
}

// RunBindPlugins runs binders until one does not Skip.
func (f *Framework) RunBindPlugins(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeName string) *framework.Status {
	status := framework.NewStatus(framework.Skip)
	for _, pl := range f.bind {
		status = pl.Bind(ctx, state, pod, nodeName)
		if status.IsSkip() {
			continue
		}
		if !status.IsSuccess() {
			if status.IsRejected() {
				return status.WithPlugin(pl.Name())
			}
			return framework.AsStatus(fmt.Errorf("running Bind plugin %q: %w", pl.Name(), status.AsError())).WithPlugin(pl.Name())
		}
		return status
	}
	return status
}

// RunPostBindPlugins runs PostBind.
func (f *Framework) RunPostBindPlugins(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeName string) {
	for _, pl := range f.postBind {
		pl.PostBind(ctx, state, pod, nodeName)
	}
}
