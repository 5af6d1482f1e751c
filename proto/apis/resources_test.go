package apis

import "testing"

func TestServiceIsTheKindInThePlural(t *testing.T) {
	want := map[string]string{"Pod": "Pods", "PriorityClass": "PriorityClasses", "Endpoints": "EndpointsService", "ServiceAccount": "ServiceAccounts"}
	seen := map[string]bool{}
	for _, r := range Resources {
		if w, ok := want[r.Kind]; ok && r.Service() != w {
			t.Errorf("%s: service %q, want %q", r.Kind, r.Service(), w)
		}
		// A service shares its proto package with the messages: it must
		// not take a kind's, a list's or another service's name.
		name := r.Group.Proto + "." + r.Service()
		if _, clash := ByMessage(name); clash || seen[name] {
			t.Errorf("%s: service %s clashes", r.Kind, name)
		}
		seen[name] = true
	}
	for _, r := range Resources {
		for _, suffix := range []string{"List", "WatchEvent", "WriteRequest"} {
			if seen[r.Message()+suffix] {
				t.Errorf("%s: a service is named %s%s", r.Kind, r.Message(), suffix)
			}
		}
	}
}
