package labels

import (
	"errors"
	"testing"

	"podline.dev/pkg/field"
	metav1 "podline.dev/proto/meta/v1"
)

func TestFromLabelSelector(t *testing.T) {
	tests := []struct {
		name     string
		selector *metav1.LabelSelector
		want     string
		matches  Set
		misses   Set
	}{
		{"nil selects nothing", nil, "<nothing>", nil, Set{}},
		{"empty selects everything", &metav1.LabelSelector{}, "", Set{"a": "b"}, nil},
		{"matchLabels", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			"app=web", Set{"app": "web", "x": "y"}, Set{"app": "db"}},
		{"matchExpressions", &metav1.LabelSelector{
			MatchLabels: map[string]string{"app": "web"},
			MatchExpressions: []*metav1.LabelSelectorRequirement{
				{Key: "env", Operator: "In", Values: []string{"prod", "staging"}},
				{Key: "track", Operator: "NotIn", Values: []string{"canary"}},
				{Key: "tier", Operator: "Exists"},
				{Key: "deprecated", Operator: "DoesNotExist"},
			}},
			"app=web,!deprecated,env in (prod,staging),tier,track notin (canary)",
			Set{"app": "web", "env": "prod", "tier": "fe"},
			Set{"app": "web", "env": "prod", "tier": "fe", "track": "canary"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := FromLabelSelector(tt.selector)
			if err != nil {
				t.Fatal(err)
			}
			if s.String() != tt.want {
				t.Errorf("String() = %q, want %q", s.String(), tt.want)
			}
			if tt.matches != nil && !s.Matches(tt.matches) {
				t.Errorf("does not match %v", tt.matches)
			}
			if tt.misses != nil && s.Matches(tt.misses) {
				t.Errorf("matches %v", tt.misses)
			}
		})
	}
}

func TestValidateLabelSelectorNamesEachField(t *testing.T) {
	ls := &metav1.LabelSelector{
		MatchLabels: map[string]string{"-bad": "ok", "app": "-bad"},
		MatchExpressions: []*metav1.LabelSelectorRequirement{
			{Key: "env", Operator: "In"},
			{Key: "tier", Operator: "Exists", Values: []string{"x"}},
			{Key: "x", Operator: "Like", Values: []string{"y"}},
		},
	}
	errs := ValidateLabelSelector(ls, field.NewPath("spec", "selector"))
	want := []string{
		`spec.selector.matchLabels: Invalid value: "-bad": ` + nameCharsMsg,
		`spec.selector.matchLabels[app]: Invalid value: "-bad": ` + valueMsg,
		"spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
		"spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
		`spec.selector.matchExpressions[2].operator: Unsupported value: "Like": supported values: "DoesNotExist", "Exists", "In", "NotIn"`,
	}
	if len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(errs), len(want), errs)
	}
	for i := range want {
		if errs[i].Error() != want[i] {
			t.Errorf("error %d:\ngot  %s\nwant %s", i, errs[i], want[i])
		}
	}
	if _, err := FromLabelSelector(ls); !errors.Is(err, ErrInvalidSelector) {
		t.Errorf("FromLabelSelector: %v, want ErrInvalidSelector", err)
	}
}
