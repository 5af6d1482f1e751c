// Package tolerationseconds is the mutating plugin that lets a new pod
// stay DefaultSeconds (300) on a node that turns not-ready or unreachable
// before the node lifecycle controller evicts it, unless the pod already
// tolerates those taints, as Kubernetes' DefaultTolerationSeconds.
package tolerationseconds

import (
	"context"

	"google.golang.org/protobuf/proto"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/internal/admission"
)

// Name is the plugin's name in spans.
const Name = "DefaultTolerationSeconds"

// Kubernetes' taints and default.
const (
	TaintNotReady    = "node.kubernetes.io/not-ready"
	TaintUnreachable = "node.kubernetes.io/unreachable"
	DefaultSeconds   = 300
)

// Plugin mutates pod creates.
type Plugin struct{}

var _ admission.Mutator = Plugin{}

// New returns the plugin.
func New() Plugin { return Plugin{} }

// Name implements admission.Mutator.
func (Plugin) Name() string { return Name }

// Admit implements admission.Mutator.
func (Plugin) Admit(_ context.Context, a *admission.Attributes) (bool, error) {
	if a.Operation != admission.Create || !a.Is("", "Pod") {
		return false, nil
	}
	pod := a.Object.(*corev1.Pod)
	if pod.Spec == nil {
		pod.Spec = &corev1.PodSpec{}
	}
	changed := false
	for _, key := range []string{TaintNotReady, TaintUnreachable} {
		if tolerates(pod.Spec.Tolerations, key) {
			continue
		}
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, &corev1.Toleration{
			Key: key, Operator: "Exists", Effect: "NoExecute", TolerationSeconds: proto.Int64(DefaultSeconds)})
		changed = true
	}
	return changed, nil
}

// tolerates reports whether some toleration already covers the NoExecute
// taint key (a toleration of every key counts, as in Kubernetes).
func tolerates(ts []*corev1.Toleration, key string) bool {
	for _, t := range ts {
		if (t.Effect == "" || t.Effect == "NoExecute") && (t.Key == key || (t.Key == "" && t.Operator == "Exists")) {
			return true
		}
	}
	return false
}
