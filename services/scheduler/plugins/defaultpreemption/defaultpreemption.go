// Package defaultpreemption is the PostFilter plugin that makes room for a
// pod that fits nowhere: on each node where preemption might help, it
// removes every lower-priority pod, checks that the pod then fits, and
// gives back (reprieves) as many of them as it can, most important first;
// the remaining ones are the node's victims. It picks the node whose
// victims matter least (lowest highest priority, then lowest priority sum,
// then fewest, then most recently started), deletes its victims gracefully,
// clears the nominations of lower-priority pods to that node, and returns
// the node as the pod's nominatedNodeName. The pod is scheduled for real in
// a later cycle, once the victims are gone.
package defaultpreemption

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/telemetry"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/scheduler/internal/framework"
	"podline.dev/services/scheduler/internal/framework/runtime"
)

// Name is the plugin's name in profiles.
const Name = "DefaultPreemption"

// Reasons and messages, as Kubernetes words them.
const (
	// ReasonNoVictims is a node without lower-priority pods.
	ReasonNoVictims = "No preemption victims found for incoming pod"
	// ReasonNotHelpful is for nodes that failed a filter preemption cannot
	// fix (UnschedulableAndUnresolvable). Kubernetes says "Preemption is not
	// helpful for scheduling"; podline's issue asks for the FailedScheduling
	// message to read "3 No preemption victims found for incoming pod" when a
	// tainted node is among the three, so both say the same here.
	ReasonNotHelpful = ReasonNoVictims
	// MsgPreemptionPolicyNever is returned for pods with preemptionPolicy Never.
	MsgPreemptionPolicyNever = "not eligible due to preemptionPolicy=Never."
	// MsgTerminatingPodOnNominatedNode is returned while earlier victims are still terminating.
	MsgTerminatingPodOnNominatedNode = "not eligible due to a terminating pod on the nominated node."
)

// Args are the plugin's pluginConfig args.
type Args struct {
	MinCandidateNodesPercentage int32 `json:"minCandidateNodesPercentage,omitempty"`
	MinCandidateNodesAbsolute   int32 `json:"minCandidateNodesAbsolute,omitempty"`
}

// DefaultPreemption is the PostFilter plugin.
type DefaultPreemption struct {
	handle framework.Handle
	args   Args
	// offset picks where the dry run starts among the potential nodes.
	offset func(n int) int
}

var _ framework.PostFilterPlugin = (*DefaultPreemption)(nil)

// New builds the plugin.
func New(_ context.Context, raw json.RawMessage, h framework.Handle) (framework.Plugin, error) {
	args := Args{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100}
	if err := runtime.DecodeArgs(raw, &args); err != nil {
		return nil, fmt.Errorf("%s args: %w", Name, err)
	}
	if args.MinCandidateNodesPercentage < 0 || args.MinCandidateNodesPercentage > 100 || args.MinCandidateNodesAbsolute < 0 {
		return nil, fmt.Errorf("%s args: minCandidateNodesPercentage must be in [0, 100] and minCandidateNodesAbsolute not negative", Name)
	}
	return &DefaultPreemption{handle: h, args: args, offset: rand.IntN}, nil
}

func (*DefaultPreemption) Name() string { return Name }

// PostFilter tries to preempt; its message is prefixed "preemption: ".
func (pl *DefaultPreemption) PostFilter(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, m framework.NodeToStatus) (*framework.PostFilterResult, *framework.Status) {
	result, status := pl.preempt(ctx, state, pod, m)
	if msg := status.Message(); msg != "" {
		return result, framework.NewStatus(status.Code(), "preemption: "+msg)
	}
	return result, status
}

// Candidate is a node and the pods that must go for the pod to fit there.
type Candidate struct {
	Node    string
	Victims []*framework.PodInfo
}

func (pl *DefaultPreemption) preempt(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, m framework.NodeToStatus) (*framework.PostFilterResult, *framework.Status) {
	if ok, msg := pl.eligible(pod, m[pod.GetStatus().GetNominatedNodeName()]); !ok {
		return nil, framework.NewStatus(framework.Unschedulable, msg)
	}
	candidates, statuses, err := pl.FindCandidates(ctx, state, pod, m)
	if err != nil && len(candidates) == 0 {
		return nil, framework.AsStatus(err)
	}
	if len(candidates) == 0 {
		fe := &framework.FitError{Pod: pod, NumAllNodes: len(statuses), Diagnosis: framework.Diagnosis{NodeToStatus: statuses}}
		// Clear a nomination the pod may still carry.
		return &framework.PostFilterResult{NominatingInfo: &framework.NominatingInfo{NominatingMode: framework.ModeOverride}},
			framework.NewStatus(framework.Unschedulable, fe.Error())
	}
	best := SelectCandidate(candidates)
	if s := pl.prepareCandidate(ctx, best, pod); !s.IsSuccess() {
		return nil, s
	}
	return &framework.PostFilterResult{NominatingInfo: &framework.NominatingInfo{NominatedNodeName: best.Node, NominatingMode: framework.ModeOverride}}, nil
}

// eligible says whether pod may preempt: not with preemptionPolicy Never,
// and not while lower-priority pods on its nominated node are still
// terminating (its earlier preemption is under way).
func (pl *DefaultPreemption) eligible(pod *corev1.Pod, nominatedNodeStatus *framework.Status) (bool, string) {
	if pod.GetSpec().GetPreemptionPolicy() == "Never" {
		return false, MsgPreemptionPolicyNever
	}
	nom := pod.GetStatus().GetNominatedNodeName()
	if nom == "" || nominatedNodeStatus.Code() == framework.UnschedulableAndUnresolvable {
		return true, ""
	}
	ni, err := pl.handle.SnapshotSharedLister().NodeInfos().Get(nom)
	if err != nil {
		return true, ""
	}
	prio := runtime.PodPriority(pod)
	for _, p := range ni.Pods {
		if runtime.PodPriority(p.Pod) < prio && p.Pod.GetMetadata().GetDeletionTimestamp() != nil {
			return false, MsgTerminatingPodOnNominatedNode
		}
	}
	return true, ""
}

// FindCandidates dry-runs preemption on the nodes where it might help and
// returns the candidates and every other node's status.
func (pl *DefaultPreemption) FindCandidates(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, m framework.NodeToStatus) ([]Candidate, framework.NodeToStatus, error) {
	all := pl.handle.SnapshotSharedLister().NodeInfos().List()
	if len(all) == 0 {
		return nil, nil, framework.ErrNoNodesAvailable
	}
	statuses := framework.NodeToStatus{}
	var potential []*framework.NodeInfo
	for _, ni := range all {
		if m[ni.Name()].Code() == framework.UnschedulableAndUnresolvable {
			statuses[ni.Name()] = framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonNotHelpful)
			continue
		}
		potential = append(potential, ni)
	}
	if len(potential) == 0 {
		return nil, statuses, nil
	}
	want := pl.numCandidates(len(potential))
	offset := pl.offset(len(potential))
	var (
		mu         sync.Mutex
		candidates []Candidate
		errs       []error
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pl.handle.Parallelizer().Until(ctx, len(potential), func(i int) {
		ni := potential[(offset+i)%len(potential)].Clone()
		victims, s := pl.SelectVictimsOnNode(ctx, state.Clone(), pod, ni)
		if s.IsSuccess() && len(victims) == 0 {
			s = framework.AsStatus(fmt.Errorf("expected at least one victim pod on node %q", ni.Name()))
		}
		mu.Lock()
		defer mu.Unlock()
		if s.IsSuccess() {
			candidates = append(candidates, Candidate{Node: ni.Name(), Victims: victims})
			if len(candidates) >= want {
				cancel()
			}
			return
		}
		if s.Code() == framework.Error {
			errs = append(errs, s.AsError())
		}
		statuses[ni.Name()] = s
	})
	return candidates, statuses, errors.Join(errs...)
}

func (pl *DefaultPreemption) numCandidates(n int) int {
	c := n * int(pl.args.MinCandidateNodesPercentage) / 100
	c = max(c, int(pl.args.MinCandidateNodesAbsolute))
	return max(min(c, n), 1)
}

// SelectVictimsOnNode finds the fewest, least important lower-priority pods
// whose removal lets pod fit on nodeInfo (a copy it changes).
func (pl *DefaultPreemption) SelectVictimsOnNode(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) ([]*framework.PodInfo, *framework.Status) {
	prio := runtime.PodPriority(pod)
	var potential []*framework.PodInfo
	for _, pi := range nodeInfo.Pods {
		if runtime.PodPriority(pi.Pod) < prio {
			potential = append(potential, pi)
		}
	}
	if len(potential) == 0 {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonNoVictims)
	}
	remove := func(pi *framework.PodInfo) *framework.Status {
		if err := nodeInfo.RemovePod(pi.Pod); err != nil {
			return framework.AsStatus(err)
		}
		return pl.handle.RunPreFilterExtensionRemovePod(ctx, state, pod, pi, nodeInfo)
	}
	add := func(pi *framework.PodInfo) *framework.Status {
		nodeInfo.AddPodInfo(pi)
		return pl.handle.RunPreFilterExtensionAddPod(ctx, state, pod, pi, nodeInfo)
	}
	for _, pi := range potential {
		if s := remove(pi); !s.IsSuccess() {
			return nil, s
		}
	}
	// If the pod does not fit even with every lower-priority pod gone, preemption cannot help here.
	if s := pl.handle.RunFilterPluginsWithNominatedPods(ctx, state, pod, nodeInfo); !s.IsSuccess() {
		return nil, s
	}
	slices.SortStableFunc(potential, func(a, b *framework.PodInfo) int {
		if MoreImportantPod(a.Pod, b.Pod) {
			return -1
		}
		if MoreImportantPod(b.Pod, a.Pod) {
			return 1
		}
		return 0
	})
	var victims []*framework.PodInfo
	for _, pi := range potential {
		if s := add(pi); !s.IsSuccess() {
			return nil, s
		}
		if s := pl.handle.RunFilterPluginsWithNominatedPods(ctx, state, pod, nodeInfo); s.IsSuccess() {
			continue // reprieved
		} else if !s.IsRejected() {
			return nil, s
		}
		if s := remove(pi); !s.IsSuccess() {
			return nil, s
		}
		victims = append(victims, pi)
	}
	return victims, nil
}

// MoreImportantPod: higher priority, then started earlier (a pod not started yet is least important).
func MoreImportantPod(a, b *corev1.Pod) bool {
	pa, pb := runtime.PodPriority(a), runtime.PodPriority(b)
	if pa != pb {
		return pa > pb
	}
	return startTime(a) < startTime(b)
}

func startTime(p *corev1.Pod) int64 {
	if t := p.GetStatus().GetStartTime(); t != nil {
		return t.GetSeconds()
	}
	return math.MaxInt64
}

// SelectCandidate picks the node whose victims matter least, by
// Kubernetes' criteria in order: the lowest highest-priority victim, the
// lowest sum of priorities, the fewest victims, the latest start among the
// highest-priority victims, then the first.
func SelectCandidate(cs []Candidate) Candidate {
	best := cs[0]
	for _, c := range cs[1:] {
		if better(c, best) {
			best = c
		}
	}
	return best
}

func better(a, b Candidate) bool {
	ha, hb := highest(a), highest(b)
	if ha != hb {
		return ha < hb
	}
	sa, sb := prioritySum(a), prioritySum(b)
	if sa != sb {
		return sa < sb
	}
	if len(a.Victims) != len(b.Victims) {
		return len(a.Victims) < len(b.Victims)
	}
	return earliestStartOfHighest(a) > earliestStartOfHighest(b)
}

func highest(c Candidate) int32 {
	h := int32(math.MinInt32)
	for _, v := range c.Victims {
		h = max(h, runtime.PodPriority(v.Pod))
	}
	return h
}

func prioritySum(c Candidate) int64 {
	var s int64
	for _, v := range c.Victims {
		// Shift so negative priorities do not make a sum smaller.
		s += int64(runtime.PodPriority(v.Pod)) + math.MaxInt32 + 1
	}
	return s
}

func earliestStartOfHighest(c Candidate) int64 {
	h := highest(c)
	earliest := int64(math.MaxInt64)
	for _, v := range c.Victims {
		if runtime.PodPriority(v.Pod) == h {
			earliest = min(earliest, startTime(v.Pod))
		}
	}
	return earliest
}

// prepareCandidate deletes the victims (gracefully), tells them why, and
// clears lower-priority nominations to the node.
func (pl *DefaultPreemption) prepareCandidate(ctx context.Context, c Candidate, pod *corev1.Pod) *framework.Status {
	conn := pl.handle.Conn()
	pods := client.Pods(conn)
	var mu sync.Mutex
	var errs []error
	pl.handle.Parallelizer().Until(ctx, len(c.Victims), func(i int) {
		victim := c.Victims[i].Pod
		if wp := pl.handle.GetWaitingPod(victim.GetMetadata().GetUid()); wp != nil {
			wp.Reject(Name, "preempted")
		} else if err := pl.evict(ctx, pods, victim, c.Node); err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			return
		}
		pl.handle.EventRecorder().Eventf(victim, "Normal", "Preempted", "Preempted by pod %v on node %v", pod.GetMetadata().GetUid(), c.Node)
	})
	if err := errors.Join(errs...); err != nil {
		return framework.AsStatus(err)
	}
	prio := runtime.PodPriority(pod)
	for _, pi := range pl.handle.NominatedPodsForNode(c.Node) {
		if runtime.PodPriority(pi.Pod) >= prio || pi.Pod.GetMetadata().GetUid() == pod.GetMetadata().GetUid() {
			continue
		}
		if err := clearNomination(ctx, pods, pi.Pod); err != nil {
			return framework.AsStatus(err)
		}
	}
	return nil
}

// evict marks the victim with a DisruptionTarget condition and deletes it
// with its own grace period, as Kubernetes does.
func (pl *DefaultPreemption) evict(ctx context.Context, pods *client.Client[*corev1.Pod], victim *corev1.Pod, node string) error {
	md := victim.GetMetadata()
	cond := &corev1.PodCondition{Type: "DisruptionTarget", Status: "True", Reason: "PreemptionByScheduler",
		Message: pl.handle.ProfileName() + ": preempting to accommodate a higher priority pod"}
	err := updateStatus(ctx, pods, victim, func(st *corev1.PodStatus) {
		st.Conditions = append(slices.DeleteFunc(st.Conditions, func(c *corev1.PodCondition) bool { return c.GetType() == cond.Type }), cond)
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("marking victim %s/%s: %w", md.GetNamespace(), md.GetName(), err)
	}
	uid := md.GetUid()
	_, err = pods.Delete(ctx, md.GetNamespace(), md.GetName(), &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{Uid: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("preempting %s/%s on node %s: %w", md.GetNamespace(), md.GetName(), node, err)
	}
	return nil
}

// updateStatus reads the pod, changes its status with mutate and writes it
// back, retrying on conflicts.
func updateStatus(ctx context.Context, pods *client.Client[*corev1.Pod], pod *corev1.Pod, mutate func(*corev1.PodStatus)) error {
	var err error
	for range 3 {
		var cur *corev1.Pod
		cur, err = pods.Get(ctx, pod.GetMetadata().GetNamespace(), pod.GetMetadata().GetName())
		if err != nil {
			return err
		}
		if cur.GetMetadata().GetUid() != pod.GetMetadata().GetUid() {
			return nil // another pod of the same name
		}
		if cur.Status == nil {
			cur.Status = &corev1.PodStatus{}
		}
		mutate(cur.Status)
		telemetry.Stamp(ctx, cur)
		if _, err = pods.UpdateStatus(ctx, cur); !apierrors.IsConflict(err) {
			return err
		}
	}
	return err
}

func clearNomination(ctx context.Context, pods *client.Client[*corev1.Pod], pod *corev1.Pod) error {
	err := updateStatus(ctx, pods, pod, func(st *corev1.PodStatus) { st.NominatedNodeName = "" })
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
