package scheduler

import (
	"context"
	"errors"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"podline.dev/pkg/object"
	"podline.dev/pkg/telemetry"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
	"podline.dev/services/scheduler/internal/framework/runtime"
	"podline.dev/services/scheduler/internal/metrics"
	"podline.dev/services/scheduler/internal/queue"
)

// Pod condition reasons, as in core/v1.
const (
	ReasonUnschedulable  = "Unschedulable"
	ReasonSchedulerError = "SchedulerError"
	maxEventMessage      = 1024
	bindTimeout          = 30 * time.Second
)

// ScheduleOne schedules the next pod; it returns false once the queue is closed.
func (s *Scheduler) ScheduleOne(ctx context.Context) bool {
	qpi, err := s.Queue.Pop(ctx)
	if err != nil {
		return false
	}
	pod := qpi.Pod
	fw, ok := s.Profiles[queue.ProfileOf(pod)]
	if !ok {
		s.log.Error("cannot schedule pod", "pod", qpi.Key(), "err", ErrNoProfile)
		s.Queue.Done(pod)
		return true
	}
	if pod.GetMetadata().GetDeletionTimestamp() != nil || s.Cache.IsAssumedPod(pod) {
		s.Queue.Done(pod)
		return true
	}
	start := s.clock.Now()
	ctx, span := telemetry.StartFromObject(ctx, pod, TracerName, "SchedulePod", trace.WithAttributes(
		attribute.String("pod", qpi.Key()), attribute.Int("attempt", qpi.Attempts), attribute.String("profile", fw.ProfileName())))
	state := framework.NewCycleState()
	cycle := s.Queue.SchedulingCycle()
	result, assumed, status, err := s.schedulingCycle(ctx, state, fw, qpi)
	if err != nil {
		s.handleSchedulingFailure(ctx, fw, qpi, status, err, result.nominatingInfo, start, cycle)
		span.End()
		return true
	}
	s.bindings.Add(1)
	go func() {
		defer s.bindings.Done()
		defer span.End()
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bindTimeout)
		defer cancel()
		s.bindingCycle(bctx, state, fw, result, assumed, start, cycle)
	}()
	return true
}

// RunSchedulingCycle runs the scheduling cycle alone for pod (snapshot,
// filter, score, assume, Reserve, Permit) without binding: the benchmark's
// measure of the algorithm without I/O. The pod stays assumed on its node.
func (s *Scheduler) RunSchedulingCycle(ctx context.Context, pod *corev1.Pod) (string, error) {
	fw, ok := s.Profiles[queue.ProfileOf(pod)]
	if !ok {
		return "", ErrNoProfile
	}
	qpi := &framework.QueuedPodInfo{PodInfo: framework.NewPodInfo(pod), Timestamp: s.clock.Now()}
	result, _, _, err := s.schedulingCycle(ctx, framework.NewCycleState(), fw, qpi)
	return result.SuggestedHost, err
}

// schedulingCycle picks a node and assumes the pod onto it. On failure it
// returns the status (its code tells Unschedulable from Error) and the error
// to report (a *framework.FitError when no node fits).
func (s *Scheduler) schedulingCycle(ctx context.Context, state *framework.CycleState, fw *runtime.Framework, qpi *framework.QueuedPodInfo) (ScheduleResult, *framework.QueuedPodInfo, *framework.Status, error) {
	pod := qpi.Pod
	tr := &cycleTrace{}
	result, err := s.schedulePod(ctx, fw, state, pod, tr)
	if err != nil {
		if errors.Is(err, framework.ErrNoNodesAvailable) {
			return result, nil, framework.NewStatus(framework.UnschedulableAndUnresolvable), err
		}
		var fitErr *framework.FitError
		if !errors.As(err, &fitErr) {
			return result, nil, framework.AsStatus(err), err
		}
		if !fw.HasPostFilterPlugins() {
			return result, nil, framework.NewStatus(framework.Unschedulable), fitErr
		}
		pctx, span := startSpan(ctx, "PostFilter")
		pfr, st := fw.RunPostFilterPlugins(pctx, state, pod, fitErr.Diagnosis.NodeToStatus)
		if span.IsRecording() && pfr != nil && pfr.NominatingInfo != nil {
			span.SetAttributes(attribute.String("nominatedNodeName", pfr.NominatedNodeName))
		}
		endSpan(span, st)
		if s.metrics != nil {
			s.metrics.PreemptionAttempts.Inc()
		}
		fitErr.Diagnosis.PostFilterMsg = st.Message()
		if pfr != nil {
			result.nominatingInfo = pfr.NominatingInfo
		}
		return result, nil, framework.NewStatus(framework.Unschedulable), fitErr
	}
	trace.SpanFromContext(ctx).SetAttributes(attribute.String("node", result.SuggestedHost),
		attribute.Int("nodes.evaluated", result.EvaluatedNodes), attribute.Int("nodes.feasible", result.FeasibleNodes))

	assumedInfo := *qpi
	assumedPod := object.Copy(pod)
	assumedPod.Spec.NodeName = result.SuggestedHost
	// What the pod requests and its affinity terms do not depend on its node.
	pi := *qpi.PodInfo
	pi.Pod = assumedPod
	assumedInfo.PodInfo = &pi
	if err := s.Cache.AssumePodInfo(&pi); err != nil {
		return result, nil, framework.AsStatus(err), err
	}
	rctx, span := startSpan(ctx, "Reserve")
	st := fw.RunReservePluginsReserve(rctx, state, assumedPod, result.SuggestedHost)
	endSpan(span, st)
	if !st.IsSuccess() {
		fw.RunReservePluginsUnreserve(ctx, state, assumedPod, result.SuggestedHost)
		_ = s.Cache.ForgetPod(assumedPod)
		return result, nil, st, s.asFitError(pod, result.SuggestedHost, st)
	}
	pctx, span := startSpan(ctx, "Permit")
	st = fw.RunPermitPlugins(pctx, state, assumedPod, result.SuggestedHost)
	endSpan(span, st)
	if !st.IsWait() && !st.IsSuccess() {
		fw.RunReservePluginsUnreserve(ctx, state, assumedPod, result.SuggestedHost)
		_ = s.Cache.ForgetPod(assumedPod)
		return result, nil, st, s.asFitError(pod, result.SuggestedHost, st)
	}
	return result, &assumedInfo, nil, nil
}

// asFitError turns a rejection at one node into Kubernetes' FitError form.
func (s *Scheduler) asFitError(pod *corev1.Pod, node string, st *framework.Status) error {
	if !st.IsRejected() {
		return st.AsError()
	}
	d := framework.Diagnosis{NodeToStatus: framework.NodeToStatus{node: st}}
	d.AddPlugin(st)
	return &framework.FitError{Pod: pod, NumAllNodes: 1, Diagnosis: d}
}

// bindingCycle waits for Permit, binds, and reports.
func (s *Scheduler) bindingCycle(ctx context.Context, state *framework.CycleState, fw *runtime.Framework, result ScheduleResult, assumed *framework.QueuedPodInfo, start time.Time, cycle int64) {
	pod := assumed.Pod
	node := result.SuggestedHost
	wctx, span := startSpan(ctx, "WaitOnPermit")
	st := fw.WaitOnPermit(wctx, pod)
	endSpan(span, st)
	if st.IsSuccess() {
		pctx, span := startSpan(ctx, "PreBind")
		st = fw.RunPreBindPlugins(pctx, state, pod, node)
		endSpan(span, st)
	}
	if st.IsSuccess() {
		bctx, span := startSpan(ctx, "Bind")
		span.SetAttributes(attribute.String("node", node))
		st = fw.RunBindPlugins(bctx, state, pod, node)
		if st.IsSkip() {
			st = framework.AsStatus(ErrNoBinder)
		}
		endSpan(span, st)
	}
	if !st.IsSuccess() {
		s.handleBindingCycleError(ctx, state, fw, assumed, node, st, start, cycle)
		return
	}
	if err := s.Cache.FinishBinding(pod); err != nil {
		s.log.Debug("finish binding", "pod", assumed.Key(), "err", err)
	}
	now := s.clock.Now()
	if s.metrics != nil {
		s.metrics.Attempt(metrics.ResultScheduled, fw.ProfileName(), now.Sub(start))
		s.metrics.E2ESchedulingDuration.WithLabelValues(metrics.ResultScheduled, fw.ProfileName()).Observe(now.Sub(start).Seconds())
		if t := assumed.InitialAttemptTimestamp; t != nil {
			s.metrics.PodSchedulingSLIDuration.WithLabelValues(strconv.Itoa(assumed.Attempts)).Observe(now.Sub(*t).Seconds())
		}
	}
	trace.SpanFromContext(ctx).SetAttributes(attribute.String("result", metrics.ResultScheduled))
	md := pod.GetMetadata()
	fw.EventRecorder().Eventf(withTrace(ctx, pod), "Normal", "Scheduled", "Successfully assigned %v/%v to %v", md.GetNamespace(), md.GetName(), node)
	s.log.Debug("bound pod", "pod", assumed.Key(), "node", node, "evaluatedNodes", result.EvaluatedNodes, "feasibleNodes", result.FeasibleNodes,
		"traceID", trace.SpanContextFromContext(ctx).TraceID().String())
	pbctx, span := startSpan(ctx, "PostBind")
	fw.RunPostBindPlugins(pbctx, state, pod, node)
	span.End()
	s.Queue.Done(pod)
}

// withTrace returns pod stamped with ctx's span (a copy), so the event joins the trace.
func withTrace(ctx context.Context, pod *corev1.Pod) *corev1.Pod {
	if telemetry.Traceparent(ctx) == "" {
		return pod
	}
	c := &corev1.Pod{ApiVersion: pod.GetApiVersion(), Kind: pod.GetKind(), Metadata: object.Copy(pod.GetMetadata())}
	telemetry.Stamp(ctx, c)
	return c
}

func (s *Scheduler) handleBindingCycleError(ctx context.Context, state *framework.CycleState, fw *runtime.Framework, assumed *framework.QueuedPodInfo, node string, st *framework.Status, start time.Time, cycle int64) {
	pod := assumed.Pod
	fw.RunReservePluginsUnreserve(ctx, state, pod, node)
	if err := s.Cache.ForgetPod(pod); err != nil {
		s.log.Error("scheduler cache ForgetPod failed", "pod", assumed.Key(), "err", err)
	}
	// The room the pod held is free again: other pods may fit.
	s.Queue.MoveAllToActiveOrBackoffQueue(framework.EventAssignedPodDelete, pod, nil, nil)
	orig := *assumed
	orig.PodInfo = framework.NewPodInfo(unassigned(pod))
	s.handleSchedulingFailure(ctx, fw, &orig, st, s.asFitError(orig.Pod, node, st), nil, start, cycle)
}

func unassigned(pod *corev1.Pod) *corev1.Pod {
	p := object.Copy(pod)
	p.Spec.NodeName = ""
	return p
}

// handleSchedulingFailure records the failure (event, PodScheduled=False,
// nomination) and puts the pod back in the queue.
func (s *Scheduler) handleSchedulingFailure(ctx context.Context, fw *runtime.Framework, qpi *framework.QueuedPodInfo, st *framework.Status, err error, nom *framework.NominatingInfo, start time.Time, cycle int64) {
	span := trace.SpanFromContext(ctx)
	reason := ReasonSchedulerError
	result := metrics.ResultError
	var fitErr *framework.FitError
	switch {
	case errors.As(err, &fitErr):
		reason, result = ReasonUnschedulable, metrics.ResultUnschedulable
		qpi.UnschedulablePlugins = fitErr.Diagnosis.UnschedulablePlugins
		qpi.PendingPlugins = fitErr.Diagnosis.PendingPlugins
		s.log.Info("unable to schedule pod; no fit; waiting", "pod", qpi.Key(), "err", err.Error(),
			"traceID", span.SpanContext().TraceID().String())
	case errors.Is(err, framework.ErrNoNodesAvailable):
		reason, result = ReasonUnschedulable, metrics.ResultUnschedulable
		qpi.UnschedulablePlugins, qpi.PendingPlugins = nil, nil
		s.log.Info("unable to schedule pod; no nodes are registered to the cluster; waiting", "pod", qpi.Key())
	default:
		qpi.UnschedulablePlugins, qpi.PendingPlugins = nil, nil
		s.log.Error("error scheduling pod; retrying", "pod", qpi.Key(), "err", err)
	}
	if s.metrics != nil {
		s.metrics.Attempt(result, fw.ProfileName(), s.clock.Since(start))
	}
	span.SetAttributes(attribute.String("result", result), attribute.String("message", err.Error()))
	if result == metrics.ResultError {
		span.SetStatus(codes.Error, err.Error())
	}

	pod := qpi.Pod
	if s.podInformer != nil {
		cached, lerr := s.podLister.Get(pod.GetMetadata().GetNamespace(), pod.GetMetadata().GetName())
		switch {
		case lerr != nil:
			s.log.Info("pod doesn't exist in informer cache", "pod", qpi.Key())
			s.Queue.Done(pod)
			return
		case cached.GetSpec().GetNodeName() != "":
			s.log.Info("pod has been assigned to node; abort adding it back to queue", "pod", qpi.Key(), "node", cached.GetSpec().GetNodeName())
			s.Queue.Done(pod)
			return
		case cached.GetMetadata().GetUid() != pod.GetMetadata().GetUid():
			s.Queue.Done(pod)
			return
		default:
			qpi.PodInfo = framework.NewPodInfo(cached)
			pod = cached
		}
	}
	if err := s.Queue.AddUnschedulableIfNotPresent(qpi, cycle); err != nil {
		s.log.Debug("requeue", "pod", qpi.Key(), "err", err)
	}
	if nom != nil && nom.NominatingMode == framework.ModeOverride {
		s.Queue.AddNominatedPod(qpi.PodInfo, nom)
	}
	msg := err.Error()
	if len(msg) > maxEventMessage {
		msg = msg[:maxEventMessage-3] + "..."
	}
	fw.EventRecorder().Eventf(withTrace(ctx, pod), "Warning", "FailedScheduling", "%s", msg)
	if s.pods == nil {
		return
	}
	cond := &corev1.PodCondition{Type: "PodScheduled", Status: "False", Reason: reason, Message: err.Error()}
	if uerr := s.updatePodStatus(ctx, pod, cond, nom); uerr != nil {
		s.log.Error("error updating pod status", "pod", qpi.Key(), "err", uerr)
	}
}
