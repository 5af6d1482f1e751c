package controller

import (
	"time"

	corev1 "podline.dev/proto/core/v1"
)

// Pod phases and condition values, as in Kubernetes.
const (
	PodPending   = "Pending"
	PodRunning   = "Running"
	PodSucceeded = "Succeeded"
	PodFailed    = "Failed"
	PodUnknown   = "Unknown"

	PodReady = "Ready"

	ConditionTrue    = "True"
	ConditionFalse   = "False"
	ConditionUnknown = "Unknown"
)

// GetPodCondition is the pod's condition of type t, or nil.
func GetPodCondition(pod *corev1.Pod, t string) *corev1.PodCondition {
	for _, c := range pod.GetStatus().GetConditions() {
		if c.GetType() == t {
			return c
		}
	}
	return nil
}

// IsPodReady reports whether the pod's Ready condition is True.
func IsPodReady(pod *corev1.Pod) bool {
	c := GetPodCondition(pod, PodReady)
	return c != nil && c.GetStatus() == ConditionTrue
}

// IsPodAvailable reports whether the pod has been ready for minReadySeconds at now.
func IsPodAvailable(pod *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	if !IsPodReady(pod) {
		return false
	}
	if minReadySeconds == 0 {
		return true
	}
	c := GetPodCondition(pod, PodReady)
	lt := c.GetLastTransitionTime()
	if lt == nil || lt.GetSeconds() == 0 {
		return false
	}
	return time.Unix(lt.GetSeconds(), 0).Add(time.Duration(minReadySeconds) * time.Second).Before(now)
}

// IsPodActive reports whether the pod counts toward its controller: not
// finished and not being deleted.
func IsPodActive(pod *corev1.Pod) bool {
	phase := pod.GetStatus().GetPhase()
	return phase != PodSucceeded && phase != PodFailed && pod.GetMetadata().GetDeletionTimestamp() == nil
}

// FilterActivePods keeps the active pods.
func FilterActivePods(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(pods))
	for _, p := range pods {
		if IsPodActive(p) {
			out = append(out, p)
		}
	}
	return out
}
