package fields

import (
	"testing"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

func TestSelectorMatchesPodFields(t *testing.T) {
	pod := &corev1.Pod{
		Metadata: &metav1.ObjectMeta{Name: "web-1", Namespace: "default"},
		Spec:     &corev1.PodSpec{NodeName: "n1"},
		Status:   &corev1.PodStatus{Phase: "Running"},
	}
	for _, tc := range []struct {
		sel  string
		want bool
	}{
		{"", true},
		{"spec.nodeName=n1", true},
		{"spec.nodeName==n1", true},
		{"spec.nodeName!=n1", false},
		{"spec.nodeName=n2", false},
		{"status.phase!=Succeeded,status.phase!=Failed", true},
		{"metadata.name=web-1,metadata.namespace=default", true},
		{"spec.nodeName=", false},
	} {
		sel, err := Parse(tc.sel, "Pod")
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.sel, err)
		}
		if got := sel.Matches(pod); got != tc.want {
			t.Errorf("%q matches = %v, want %v", tc.sel, got, tc.want)
		}
	}
}

func TestParseRejectsFieldsTheKindDoesNotSelect(t *testing.T) {
	for _, tc := range []struct{ sel, kind, want string }{
		{"spec.nodeName=n1", "Node", "field label not supported: spec.nodeName"},
		{"status.phase", "Pod", "invalid selector: 'status.phase'; can't understand 'status.phase'"},
	} {
		_, err := Parse(tc.sel, tc.kind)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Parse(%q, %s) = %v, want %q", tc.sel, tc.kind, err, tc.want)
		}
	}
}

func BenchmarkSelectorMatchesNodeName(b *testing.B) {
	pod := &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: "p"}, Spec: &corev1.PodSpec{NodeName: "node-7"}}
	sel, err := Parse("spec.nodeName=node-7", "Pod")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if !sel.Matches(pod) {
			b.Fatal("no match")
		}
	}
}

func TestTriggerOfPodsIsTheNode(t *testing.T) {
	pod := &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: "p"}, Spec: &corev1.PodSpec{NodeName: "n1"}}
	if got := Trigger("Pod")(pod); got != "n1" {
		t.Errorf("Trigger(Pod) = %q, want n1", got)
	}
	if Trigger("Node") != nil {
		t.Error("Nodes have no trigger field")
	}
	for _, tc := range []struct {
		sel   string
		value string
		ok    bool
	}{
		{"spec.nodeName=n1", "n1", true},
		{"status.phase!=Failed,spec.nodeName==n2", "n2", true},
		{"spec.nodeName=", "", true},
		{"spec.nodeName!=n1", "", false},
		{"status.phase=Running", "", false},
	} {
		sel, err := Parse(tc.sel, "Pod")
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := sel.TriggerValue("Pod"); v != tc.value || ok != tc.ok {
			t.Errorf("%q: TriggerValue = %q, %v; want %q, %v", tc.sel, v, ok, tc.value, tc.ok)
		}
	}
}
