package k8sproto

import (
	"strings"
	"testing"

	"podline.dev/proto/apis"
)

// Every kind podline serves, and every body a subresource takes, has its
// Kubernetes message in the table.
func TestTableCoversEveryServedKind(t *testing.T) {
	for _, r := range apis.Resources {
		gv := r.Group.GroupVersion()
		kinds := []string{r.Kind}
		for _, a := range r.Actions {
			kinds = append(kinds, a.Kind)
		}
		for _, k := range kinds {
			if fields.lookup(gv, k) == nil {
				t.Errorf("no Kubernetes message for %s %s", gv, k)
			}
		}
		if fields.lookup(gv, "DeleteOptions") == nil {
			t.Errorf("no DeleteOptions under %s", gv)
		}
	}
	// The body of deployments/scale and replicasets/scale.
	if fields.lookup("autoscaling/v1", "Scale") == nil {
		t.Error("no Kubernetes message for autoscaling/v1 Scale")
	}
}

func TestParseRefusesABrokenTable(t *testing.T) {
	tests := map[string]string{
		"a message used but not defined": "message a.A\n1 b a.B\n",
		"a field number twice":           "message a.A\n1 b string\n1 c string\n",
		"an unknown type":                "message a.A\n1 b strung\n",
		"a map of messages":              "message a.A\n1 b map[string]a.A\n",
		"an inlined list":                "message a.A\n1 ...b []a.A\n",
		"a field outside a message":      "1 b string\n",
		"a bad field number":             "message a.A\n0 b string\n",
	}
	for name, text := range tests {
		if _, err := parse(text); err == nil {
			t.Errorf("%s: parsed %q", name, strings.TrimSpace(text))
		}
	}
}
