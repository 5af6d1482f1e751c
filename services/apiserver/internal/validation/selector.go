package validation

import (
	"slices"
	"strings"

	metav1 "podline.dev/proto/meta/v1"
)

// selectorMatches evaluates a LabelSelector (matchLabels and matchExpressions) against labels.
func selectorMatches(sel *metav1.LabelSelector, labels map[string]string) bool {
	for k, v := range sel.GetMatchLabels() {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	for _, req := range sel.GetMatchExpressions() {
		v, ok := labels[req.GetKey()]
		switch req.GetOperator() {
		case "In":
			if !ok || !slices.Contains(req.GetValues(), v) {
				return false
			}
		case "NotIn":
			if ok && slices.Contains(req.GetValues(), v) {
				return false
			}
		case "Exists":
			if !ok {
				return false
			}
		case "DoesNotExist":
			if ok {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// labelString renders labels as Kubernetes prints them in messages: map[a:b c:d].
func labelString(labels map[string]string) string {
	keys := sortedKeys(labels)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ":" + labels[k]
	}
	return "map[" + strings.Join(parts, " ") + "]"
}
