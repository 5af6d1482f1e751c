package field

import "testing"

func TestPathRendersLikeKubernetes(t *testing.T) {
	tests := []struct {
		name string
		path *Path
		want string
	}{
		{"root field", NewPath("spec"), "spec"},
		{"nested fields", NewPath("spec", "template", "spec"), "spec.template.spec"},
		{"list index", NewPath("spec").Child("containers").Index(0).Child("image"), "spec.containers[0].image"},
		{"map key", NewPath("metadata", "labels").Key("app"), "metadata.labels[app]"},
	}
	for _, tt := range tests {
		if got := tt.path.String(); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestErrorMessagesReadLikeKubernetes(t *testing.T) {
	tests := []struct {
		err  *Error
		want string
	}{
		{Required(NewPath("spec", "containers"), ""), "spec.containers: Required value"},
		{Invalid(NewPath("spec", "replicas"), int32(-1), "must be greater than or equal to 0"),
			"spec.replicas: Invalid value: -1: must be greater than or equal to 0"},
		{Invalid(NewPath("metadata", "name"), "Web", "a lowercase RFC 1123 subdomain"),
			`metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain`},
		{NotSupported(NewPath("spec", "restartPolicy"), "Sometimes", []string{"Always", "Never"}),
			`spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never"`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
	list := ErrorList{Required(NewPath("a"), ""), Required(NewPath("b"), "")}
	if got, want := list.Error(), "[a: Required value, b: Required value]"; got != want {
		t.Errorf("list: got %q, want %q", got, want)
	}
}
