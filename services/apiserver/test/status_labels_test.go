package test

import (
	"testing"

	"podline.dev/pkg/client"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// A status write made from a stale copy does not undo a label set since:
// the kubelet reports a Node's status while an admin labels it.
func TestStatusWriteKeepsLabels(t *testing.T) {
	s, _ := startServer(t)
	ctx := ctxFor(t)
	nodes := client.Nodes(s.Conn)
	stale, err := nodes.Create(ctx, &corev1.Node{Metadata: &metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"kubernetes.io/hostname": "n1"}}})
	if err != nil {
		t.Fatal(err)
	}
	labelled, err := nodes.Get(ctx, "", "n1")
	if err != nil {
		t.Fatal(err)
	}
	labelled.Metadata.Labels["node-role.kubernetes.io/control-plane"] = ""
	if _, err := nodes.Update(ctx, labelled); err != nil {
		t.Fatal(err)
	}
	stale.Metadata.ResourceVersion = ""
	stale.Status = &corev1.NodeStatus{Phase: "Running"}
	out, err := nodes.UpdateStatus(ctx, stale)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out.GetMetadata().GetLabels()["node-role.kubernetes.io/control-plane"]; !ok {
		t.Errorf("status write dropped the label: %v", out.GetMetadata().GetLabels())
	}
	if out.GetStatus().GetPhase() != "Running" {
		t.Errorf("status not written: %v", out.GetStatus())
	}
}
