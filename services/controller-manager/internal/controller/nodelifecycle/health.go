package nodelifecycle

import (
	"time"

	coordinationv1 "podline.dev/proto/coordination/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/controller-manager/internal/controller"
)

// Taints the controller manages, and the effect they carry.
const (
	TaintUnreachable = "node.kubernetes.io/unreachable"
	TaintNotReady    = "node.kubernetes.io/not-ready"
	EffectNoExecute  = "NoExecute"
)

// Node condition types the controller marks Unknown.
var monitoredConditions = []string{"Ready", "MemoryPressure", "DiskPressure", "PIDPressure"}

// nodeHealth is what the controller last saw of a node's heartbeats, and
// when, on its own clock: clocks of nodes and controller need not agree.
type nodeHealth struct {
	probe          time.Time // when a heartbeat was last seen to move
	readyHeartbeat int64     // the Ready condition's lastHeartbeatTime then
	leaseRenew     time.Time // the Lease's renewTime then
}

func readyCondition(n *corev1.Node) *corev1.NodeCondition {
	for _, c := range n.GetStatus().GetConditions() {
		if c.GetType() == "Ready" {
			return c
		}
	}
	return nil
}

func leaseRenewTime(l *coordinationv1.Lease) time.Time {
	rt := l.GetSpec().GetRenewTime()
	if rt == nil {
		return time.Time{}
	}
	return time.Unix(rt.GetSeconds(), int64(rt.GetNanos()))
}

// observe updates what is known of a node's heartbeats at now. A node seen
// for the first time gets a full grace period from now.
func observe(prev *nodeHealth, node *corev1.Node, lease *coordinationv1.Lease, now time.Time) *nodeHealth {
	h := &nodeHealth{probe: now}
	if rc := readyCondition(node); rc != nil {
		h.readyHeartbeat = rc.GetLastHeartbeatTime().GetSeconds()
	}
	if lease != nil {
		h.leaseRenew = leaseRenewTime(lease)
	}
	if prev == nil {
		return h
	}
	if h.readyHeartbeat == prev.readyHeartbeat && !h.leaseRenew.After(prev.leaseRenew) {
		h.probe = prev.probe // nothing moved
	}
	if h.leaseRenew.Before(prev.leaseRenew) {
		h.leaseRenew = prev.leaseRenew
	}
	return h
}

// overdue: no heartbeat moved for the grace period.
func (h *nodeHealth) overdue(now time.Time, grace time.Duration) bool {
	return now.After(h.probe.Add(grace))
}

// markUnknown sets the monitored conditions of node (a copy the caller
// owns) to Unknown, as Kubernetes does for a node that stopped reporting.
// It reports whether anything changed.
func markUnknown(node *corev1.Node, now time.Time) bool {
	if node.Status == nil {
		node.Status = &corev1.NodeStatus{}
	}
	ts := &metav1.Time{Seconds: now.Unix()}
	changed := false
	for _, t := range monitoredConditions {
		var cur *corev1.NodeCondition
		for _, c := range node.Status.Conditions {
			if c.GetType() == t {
				cur = c
			}
		}
		switch {
		case cur == nil:
			node.Status.Conditions = append(node.Status.Conditions, &corev1.NodeCondition{
				Type: t, Status: controller.ConditionUnknown, Reason: "NodeStatusNeverUpdated",
				Message: "Kubelet never posted node status.", LastHeartbeatTime: node.GetMetadata().GetCreationTimestamp(),
				LastTransitionTime: ts,
			})
			changed = true
		case cur.GetStatus() != controller.ConditionUnknown:
			cur.Status, cur.Reason, cur.Message = controller.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."
			cur.LastTransitionTime = ts
			changed = true
		}
	}
	return changed
}

// wantTaints returns the node's taints with the unreachable / not-ready
// NoExecute taint its Ready condition calls for, and whether they changed.
func wantTaints(node *corev1.Node, now time.Time) ([]*corev1.Taint, bool) {
	want := ""
	switch readyCondition(node).GetStatus() {
	case controller.ConditionFalse:
		want = TaintNotReady
	case controller.ConditionUnknown:
		want = TaintUnreachable
	case "":
		return node.GetSpec().GetTaints(), false // nothing known yet
	}
	var out []*corev1.Taint
	changed, has := false, false
	for _, t := range node.GetSpec().GetTaints() {
		managed := t.GetEffect() == EffectNoExecute && (t.GetKey() == TaintUnreachable || t.GetKey() == TaintNotReady)
		if managed && t.GetKey() != want {
			changed = true
			continue
		}
		if managed {
			has = true
		}
		out = append(out, t)
	}
	if want != "" && !has {
		out = append(out, &corev1.Taint{Key: want, Effect: EffectNoExecute, TimeAdded: &metav1.Time{Seconds: now.Unix()}})
		changed = true
	}
	return out, changed
}

// tolerates is Kubernetes' Toleration.ToleratesTaint.
func tolerates(tol *corev1.Toleration, taint *corev1.Taint) bool {
	if tol.GetEffect() != "" && tol.GetEffect() != taint.GetEffect() {
		return false
	}
	if tol.GetKey() != "" && tol.GetKey() != taint.GetKey() {
		return false
	}
	switch tol.GetOperator() {
	case "", "Equal":
		return tol.GetValue() == taint.GetValue()
	case "Exists":
		return true
	}
	return false
}

// evictionTime says whether pod must leave a node with taints, and when:
// at once if it does not tolerate every NoExecute taint; otherwise after
// the shortest tolerationSeconds of the tolerations used, counted from when
// the taint was added; never if they tolerate for ever.
func evictionTime(pod *corev1.Pod, taints []*corev1.Taint, now time.Time) (time.Time, bool) {
	var since time.Time
	minSeconds := int64(-1)
	any := false
	for _, taint := range taints {
		if taint.GetEffect() != EffectNoExecute {
			continue
		}
		any = true
		added := now
		if ta := taint.GetTimeAdded(); ta != nil && ta.GetSeconds() != 0 {
			added = time.Unix(ta.GetSeconds(), 0)
		}
		if since.IsZero() || added.Before(since) {
			since = added
		}
		tolerated := false
		for _, tol := range pod.GetSpec().GetTolerations() {
			if !tolerates(tol, taint) {
				continue
			}
			tolerated = true
			if tol.TolerationSeconds != nil {
				s := max(*tol.TolerationSeconds, 0)
				if minSeconds < 0 || s < minSeconds {
					minSeconds = s
				}
			}
		}
		if !tolerated {
			return now, true
		}
	}
	if !any || minSeconds < 0 {
		return time.Time{}, false
	}
	return since.Add(time.Duration(minSeconds) * time.Second), true
}
