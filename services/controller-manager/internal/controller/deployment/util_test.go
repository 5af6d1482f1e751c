package deployment

import (
	"strings"
	"testing"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	ctltest "podline.dev/services/controller-manager/internal/controller/testing"
)

func intOrStr(i int32) *metav1.IntOrString { return &metav1.IntOrString{IntVal: i} }
func pct(s string) *metav1.IntOrString     { return &metav1.IntOrString{Type: 1, StrVal: s} }

func TestResolveFenceposts(t *testing.T) {
	tests := []struct {
		name                   string
		surge, unavailable     *metav1.IntOrString
		desired                int32
		wantSurge, wantUnavail int32
		wantErr                bool
	}{
		{"defaults of 3: surge rounds up, unavailable down", pct("25%"), pct("25%"), 3, 1, 0, false},
		{"defaults of 10", pct("25%"), pct("25%"), 10, 3, 2, false},
		{"defaults of 4", pct("25%"), pct("25%"), 4, 1, 1, false},
		{"ints", intOrStr(1), intOrStr(0), 3, 1, 0, false},
		{"both zero makes unavailable 1", intOrStr(0), intOrStr(0), 3, 0, 1, false},
		{"both percentages round to zero", pct("10%"), pct("10%"), 1, 1, 0, false},
		{"zero replicas", pct("25%"), pct("25%"), 0, 0, 1, false},
		{"100%", pct("100%"), pct("0%"), 5, 5, 0, false},
		{"not a percentage", &metav1.IntOrString{Type: 1, StrVal: "3"}, intOrStr(0), 3, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, u, err := ResolveFenceposts(tt.surge, tt.unavailable, tt.desired)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if !tt.wantErr && (s != tt.wantSurge || u != tt.wantUnavail) {
				t.Errorf("surge, unavailable = %d, %d; want %d, %d", s, u, tt.wantSurge, tt.wantUnavail)
			}
		})
	}
}

func TestMaxUnavailableIsCappedAtReplicas(t *testing.T) {
	d := ctltest.MakeDeployment().Replicas(2).Rolling(0, 5).Obj()
	if got := MaxUnavailable(d); got != 2 {
		t.Errorf("MaxUnavailable = %d, want 2", got)
	}
	if got := MaxUnavailable(ctltest.MakeDeployment().Recreate().Obj()); got != 0 {
		t.Errorf("Recreate MaxUnavailable = %d, want 0", got)
	}
}

func TestComputeHashIsStableAndSafe(t *testing.T) {
	tmpl := ctltest.Template(map[string]string{"app": "web"}, "web:1")
	h := ComputeHash(tmpl, nil)
	if h != ComputeHash(ctltest.Template(map[string]string{"app": "web"}, "web:1"), nil) {
		t.Error("the same template hashed differently")
	}
	if h == ComputeHash(ctltest.Template(map[string]string{"app": "web"}, "web:2"), nil) {
		t.Error("different templates hashed the same")
	}
	one := int32(1)
	if h == ComputeHash(tmpl, &one) {
		t.Error("a collision count did not change the hash")
	}
	for _, c := range h {
		if !strings.ContainsRune("bcdfghjklmnpqrstvwxz2456789", c) {
			t.Errorf("hash %q has %q outside the safe alphabet", h, c)
		}
	}
}

func TestEqualIgnoreHash(t *testing.T) {
	a := ctltest.Template(map[string]string{"app": "web"}, "web:1")
	b := ctltest.Template(map[string]string{"app": "web", PodTemplateHashLabel: "abc"}, "web:1")
	if !EqualIgnoreHash(a, b) {
		t.Error("templates differing only in pod-template-hash are not equal")
	}
	if EqualIgnoreHash(a, ctltest.Template(map[string]string{"app": "web"}, "web:2")) {
		t.Error("templates with different images are equal")
	}
	if !EqualIgnoreHash(&corev1.PodTemplateSpec{Spec: a.Spec}, &corev1.PodTemplateSpec{Metadata: &metav1.ObjectMeta{}, Spec: a.Spec}) {
		t.Error("no metadata and empty metadata differ")
	}
	if a.Metadata.Labels[PodTemplateHashLabel] != "" || b.Metadata.Labels[PodTemplateHashLabel] != "abc" {
		t.Error("EqualIgnoreHash changed its arguments")
	}
}
