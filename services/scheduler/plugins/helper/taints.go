package helper

import corev1 "podline.dev/proto/core/v1"

// Taint effects and toleration operators, as in core/v1.
const (
	TaintEffectNoSchedule       = "NoSchedule"
	TaintEffectPreferNoSchedule = "PreferNoSchedule"
	TaintEffectNoExecute        = "NoExecute"
	TolerationOpExists          = "Exists"
	TolerationOpEqual           = "Equal"
)

// ToleratesTaint reports whether toleration t tolerates taint, as
// core/v1's Toleration.ToleratesTaint.
func ToleratesTaint(t *corev1.Toleration, taint *corev1.Taint) bool {
	if t.GetEffect() != "" && t.GetEffect() != taint.GetEffect() {
		return false
	}
	if t.GetKey() != "" && t.GetKey() != taint.GetKey() {
		return false
	}
	switch t.GetOperator() {
	case "", TolerationOpEqual:
		return t.GetValue() == taint.GetValue()
	case TolerationOpExists:
		return true
	}
	return false
}

// TolerationsTolerateTaint reports whether any toleration tolerates taint.
func TolerationsTolerateTaint(tolerations []*corev1.Toleration, taint *corev1.Taint) bool {
	for _, t := range tolerations {
		if ToleratesTaint(t, taint) {
			return true
		}
	}
	return false
}

// FindMatchingUntoleratedTaint returns the first taint that passes filter
// (nil: all) and that no toleration tolerates.
func FindMatchingUntoleratedTaint(taints []*corev1.Taint, tolerations []*corev1.Toleration, filter func(*corev1.Taint) bool) (*corev1.Taint, bool) {
	for _, taint := range taints {
		if filter != nil && !filter(taint) {
			continue
		}
		if !TolerationsTolerateTaint(tolerations, taint) {
			return taint, true
		}
	}
	return nil, false
}

// DoNotScheduleTaints are the taints the filter enforces: NoSchedule and NoExecute.
func DoNotScheduleTaints(t *corev1.Taint) bool {
	return t.GetEffect() == TaintEffectNoSchedule || t.GetEffect() == TaintEffectNoExecute
}
