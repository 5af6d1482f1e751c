// Package defaultbinder binds a pod by writing a Binding to the pod's
// binding subresource (Pods.Bind). The Binding carries the current span's
// traceparent, which the apiserver merges into the pod's annotations, so
// the kubelet's spans join the pod's trace.
package defaultbinder

import (
	"context"
	"encoding/json"

	"podline.dev/pkg/client"
	"podline.dev/pkg/telemetry"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/scheduler/internal/framework"
)

// Name is the plugin's name in profiles.
const Name = "DefaultBinder"

// DefaultBinder is the Bind plugin.
type DefaultBinder struct {
	handle framework.Handle
}

var _ framework.BindPlugin = (*DefaultBinder)(nil)

// New builds the plugin.
func New(_ context.Context, _ json.RawMessage, h framework.Handle) (framework.Plugin, error) {
	return &DefaultBinder{handle: h}, nil
}

func (*DefaultBinder) Name() string { return Name }

// Binding is the Binding that assigns pod to node, stamped with ctx's span.
func Binding(ctx context.Context, pod *corev1.Pod, node string) *corev1.Binding {
	md := pod.GetMetadata()
	b := &corev1.Binding{
		ApiVersion: "v1",
		Kind:       "Binding",
		Metadata:   &metav1.ObjectMeta{Namespace: md.GetNamespace(), Name: md.GetName(), Uid: md.GetUid()},
		Target:     &corev1.ObjectReference{Kind: "Node", Name: node},
	}
	telemetry.Stamp(ctx, b)
	return b
}

// Bind writes the Binding.
func (b *DefaultBinder) Bind(ctx context.Context, _ *framework.CycleState, pod *corev1.Pod, nodeName string) *framework.Status {
	conn := b.handle.Conn()
	md := pod.GetMetadata()
	req := &corev1.BindingWriteRequest{Namespace: md.GetNamespace(), Name: md.GetName(), Object: Binding(ctx, pod, nodeName)}
	if _, err := client.Do(ctx, conn, client.Pods(conn).Resource, "Bind", req); err != nil {
		return framework.AsStatus(err)
	}
	return nil
}
