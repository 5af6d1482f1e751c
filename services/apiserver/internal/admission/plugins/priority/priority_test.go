package priority

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/proto/apis"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	schedulingv1 "podline.dev/proto/scheduling/v1"
	"podline.dev/services/apiserver/internal/admission"
)

func class(name string, value int32, def bool, policy *string) *schedulingv1.PriorityClass {
	return &schedulingv1.PriorityClass{Metadata: &metav1.ObjectMeta{Name: name}, Value: value, GlobalDefault: def, PreemptionPolicy: policy}
}

func TestPriority(t *testing.T) {
	pods, _ := apis.Lookup("", "pods")
	plain := admission.NewMemory("scheduling.k8s.io", "priorityclasses", class("high", 1000, false, nil), class("batch", 10, false, proto.String("Never")))
	withDefault := admission.NewMemory("scheduling.k8s.io", "priorityclasses", class("high", 1000, false, nil), class("normal", 50, true, nil))
	for _, tc := range []struct {
		name       string
		classes    *admission.Memory
		spec       *corev1.PodSpec
		wantPrio   int32
		wantClass  string
		wantPolicy string
		wantErr    string
	}{
		{name: "no class, no default", classes: plain, spec: &corev1.PodSpec{}, wantPolicy: "PreemptLowerPriority"},
		{name: "global default", classes: withDefault, spec: &corev1.PodSpec{}, wantPrio: 50, wantClass: "normal", wantPolicy: "PreemptLowerPriority"},
		{name: "named class", classes: withDefault, spec: &corev1.PodSpec{PriorityClassName: "high"}, wantPrio: 1000, wantClass: "high", wantPolicy: "PreemptLowerPriority"},
		{name: "class policy", classes: plain, spec: &corev1.PodSpec{PriorityClassName: "batch"}, wantPrio: 10, wantClass: "batch", wantPolicy: "Never"},
		{name: "system class", classes: plain, spec: &corev1.PodSpec{PriorityClassName: "system-node-critical"}, wantPrio: 2000001000, wantClass: "system-node-critical", wantPolicy: "PreemptLowerPriority"},
		{name: "matching explicit priority", classes: plain, spec: &corev1.PodSpec{PriorityClassName: "high", Priority: proto.Int32(1000)}, wantPrio: 1000, wantClass: "high", wantPolicy: "PreemptLowerPriority"},
		{name: "missing class", classes: plain, spec: &corev1.PodSpec{PriorityClassName: "gold"},
			wantErr: `pods "p" is forbidden: no PriorityClass with name gold was found`},
		{name: "explicit priority without class", classes: plain, spec: &corev1.PodSpec{Priority: proto.Int32(100)},
			wantErr: `pods "p" is forbidden: the integer value of priority (100) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name`},
		{name: "conflicting policy", classes: plain, spec: &corev1.PodSpec{PriorityClassName: "batch", PreemptionPolicy: proto.String("PreemptLowerPriority")},
			wantErr: `pods "p" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: "p"}, Spec: tc.spec}
			a := &admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "default", Name: "p", Object: pod}
			_, err := New(tc.classes).Admit(context.Background(), a)
			if tc.wantErr != "" {
				if !apierrors.IsForbidden(err) || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s := pod.Spec
			if s.GetPriority() != tc.wantPrio || s.Priority == nil || s.PriorityClassName != tc.wantClass || s.GetPreemptionPolicy() != tc.wantPolicy {
				t.Fatalf("priority/class/policy = %d/%q/%q, want %d/%q/%q", s.GetPriority(), s.PriorityClassName, s.GetPreemptionPolicy(), tc.wantPrio, tc.wantClass, tc.wantPolicy)
			}
		})
	}
}

// TestAdmitReportsExactlyWhenThePodChanged checks the plugin's report
// against proto.Equal of the pod before and after.
func TestAdmitReportsExactlyWhenThePodChanged(t *testing.T) {
	pods, _ := apis.Lookup("", "pods")
	classes := admission.NewMemory("scheduling.k8s.io", "priorityclasses", class("high", 1000, false, nil), class("batch", 10, false, proto.String("Never")))
	withDefault := admission.NewMemory("scheduling.k8s.io", "priorityclasses", class("normal", 50, true, nil))
	for _, tc := range []struct {
		name    string
		classes *admission.Memory
		spec    *corev1.PodSpec
		want    bool
	}{
		{"nothing set", classes, &corev1.PodSpec{}, true},
		{"class named", classes, &corev1.PodSpec{PriorityClassName: "high"}, true},
		{"priority and policy already there", classes, &corev1.PodSpec{PriorityClassName: "high", Priority: proto.Int32(1000),
			PreemptionPolicy: proto.String("PreemptLowerPriority")}, false},
		{"no class, zero priority and policy there", classes, &corev1.PodSpec{Priority: proto.Int32(0),
			PreemptionPolicy: proto.String("Never")}, false},
		{"policy missing", classes, &corev1.PodSpec{PriorityClassName: "batch", Priority: proto.Int32(10)}, true},
		{"priority missing", classes, &corev1.PodSpec{PriorityClassName: "batch", PreemptionPolicy: proto.String("Never")}, true},
		{"global default's name added", withDefault, &corev1.PodSpec{Priority: proto.Int32(50), PreemptionPolicy: proto.String("Never")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: "p"}, Spec: tc.spec}
			before := proto.Clone(pod)
			a := &admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "default", Name: "p", Object: pod}
			got, err := New(tc.classes).Admit(context.Background(), a)
			if err != nil {
				t.Fatal(err)
			}
			if changed := !proto.Equal(before, pod); got != tc.want || changed != tc.want {
				t.Fatalf("Admit reported %v, the pod changed: %v; want %v", got, changed, tc.want)
			}
		})
	}
}
