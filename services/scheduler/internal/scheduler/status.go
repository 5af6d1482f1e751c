package scheduler

import (
	"context"
	"slices"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/object"
	"podline.dev/pkg/telemetry"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/scheduler/internal/framework"
)

// updatePodStatus writes the PodScheduled condition and the nomination, if
// they changed, stamped with the attempt's span; it retries on conflicts.
func (s *Scheduler) updatePodStatus(ctx context.Context, pod *corev1.Pod, cond *corev1.PodCondition, nom *framework.NominatingInfo) error {
	cur := pod
	for attempt := 0; ; attempt++ {
		next := object.Copy(cur)
		if next.Status == nil {
			next.Status = &corev1.PodStatus{}
		}
		changed := setCondition(next.Status, cond, s.clock.Now().Unix())
		if nom != nil && nom.NominatingMode == framework.ModeOverride && next.Status.NominatedNodeName != nom.NominatedNodeName {
			next.Status.NominatedNodeName = nom.NominatedNodeName
			changed = true
		}
		if !changed {
			return nil
		}
		telemetry.Stamp(ctx, next)
		_, err := s.pods.UpdateStatus(ctx, next)
		if err == nil || apierrors.IsNotFound(err) {
			return nil
		}
		if !apierrors.IsConflict(err) || attempt == 2 {
			return err
		}
		if cur, err = s.pods.Get(ctx, pod.GetMetadata().GetNamespace(), pod.GetMetadata().GetName()); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
		if cur.GetSpec().GetNodeName() != "" {
			return nil
		}
	}
}

// setCondition sets c on status unless it is there already with the same
// status, reason and message; the transition time moves only when the status does.
func setCondition(status *corev1.PodStatus, c *corev1.PodCondition, now int64) bool {
	i := slices.IndexFunc(status.Conditions, func(x *corev1.PodCondition) bool { return x.GetType() == c.GetType() })
	next := object.Copy(c)
	next.LastProbeTime = nil
	next.LastTransitionTime = &metav1.Time{Seconds: now}
	if i < 0 {
		status.Conditions = append(status.Conditions, next)
		return true
	}
	old := status.Conditions[i]
	if old.GetStatus() == next.GetStatus() && old.GetReason() == next.GetReason() && old.GetMessage() == next.GetMessage() {
		return false
	}
	if old.GetStatus() == next.GetStatus() {
		next.LastTransitionTime = old.GetLastTransitionTime()
	}
	status.Conditions = slices.Clone(status.Conditions)
	status.Conditions[i] = next
	return true
}
