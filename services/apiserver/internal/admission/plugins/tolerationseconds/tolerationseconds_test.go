package tolerationseconds

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	"podline.dev/proto/apis"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/internal/admission"
)

func TestDefaultTolerationSeconds(t *testing.T) {
	pods, _ := apis.Lookup("", "pods")
	for _, tc := range []struct {
		name string
		have []*corev1.Toleration
		want map[string]int64 // key → seconds of the resulting NoExecute tolerations
	}{
		{name: "none: both added", want: map[string]int64{TaintNotReady: 300, TaintUnreachable: 300}},
		{name: "own not-ready kept", have: []*corev1.Toleration{{Key: TaintNotReady, Operator: "Exists", Effect: "NoExecute", TolerationSeconds: proto.Int64(5)}},
			want: map[string]int64{TaintNotReady: 5, TaintUnreachable: 300}},
		{name: "tolerate everything: nothing added", have: []*corev1.Toleration{{Operator: "Exists"}}, want: map[string]int64{}},
		{name: "NoSchedule toleration does not count", have: []*corev1.Toleration{{Key: TaintUnreachable, Operator: "Exists", Effect: "NoSchedule"}},
			want: map[string]int64{TaintNotReady: 300, TaintUnreachable: 300}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: &corev1.PodSpec{Tolerations: tc.have}}
			a := &admission.Attributes{Operation: admission.Create, Resource: pods, Object: pod}
			if _, err := New().Admit(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for _, tol := range pod.Spec.Tolerations {
				if tol.Effect == "NoExecute" && tol.Key != "" {
					got[tol.Key] = tol.GetTolerationSeconds()
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("NoExecute tolerations = %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s seconds = %d, want %d", k, got[k], v)
				}
			}
		})
	}
}
