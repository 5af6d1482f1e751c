package filter

import (
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// sandbox builds a listed sandbox.
type sandbox struct{ s runtimeapi.PodSandbox }

func makeSandbox(id string) *sandbox {
	return &sandbox{runtimeapi.PodSandbox{Id: id, Labels: map[string]string{}}}
}
func (b *sandbox) notReady() *sandbox {
	b.s.State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	return b
}
func (b *sandbox) label(k, v string) *sandbox  { b.s.Labels[k] = v; return b }
func (b *sandbox) obj() *runtimeapi.PodSandbox { return &b.s }
func sandboxIDs(in []*runtimeapi.PodSandbox) string {
	var ids []string
	for _, s := range in {
		ids = append(ids, s.Id)
	}
	return strings.Join(ids, ",")
}

func TestSandboxFilterSelectsByIDPrefixStateAndLabels(t *testing.T) {
	all := []*runtimeapi.PodSandbox{
		makeSandbox("aaa1").label("app", "web").obj(),
		makeSandbox("aab2").label("app", "db").notReady().obj(),
		makeSandbox("bbb3").label("app", "web").label("tier", "front").obj(),
	}
	cases := []struct {
		name string
		f    *runtimeapi.PodSandboxFilter
		want string
	}{
		{"no filter lists all", nil, "aaa1,aab2,bbb3"},
		{"an empty filter lists all", &runtimeapi.PodSandboxFilter{}, "aaa1,aab2,bbb3"},
		{"a full ID", &runtimeapi.PodSandboxFilter{Id: "bbb3"}, "bbb3"},
		{"an ID prefix", &runtimeapi.PodSandboxFilter{Id: "aa"}, "aaa1,aab2"},
		{"ready only", &runtimeapi.PodSandboxFilter{State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}}, "aaa1,bbb3"},
		{"not ready only", &runtimeapi.PodSandboxFilter{State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY}}, "aab2"},
		{"one label", &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"app": "web"}}, "aaa1,bbb3"},
		{"every label must match", &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"app": "web", "tier": "front"}}, "bbb3"},
		{"a missing label matches nothing", &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"zone": "a"}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := sandboxIDs(Sandboxes(all, tc.f)); got != tc.want {
				t.Fatalf("selected %q, want %q", got, tc.want)
			}
		})
	}
}

func TestContainerFilterSelectsBySandboxStateAndLabels(t *testing.T) {
	c := func(id, sb string, st runtimeapi.ContainerState, labels map[string]string) *runtimeapi.Container {
		return &runtimeapi.Container{Id: id, PodSandboxId: sb, State: st, Labels: labels}
	}
	all := []*runtimeapi.Container{
		c("c1", "s1", runtimeapi.ContainerState_CONTAINER_RUNNING, map[string]string{"io.kubernetes.container.name": "web"}),
		c("c2", "s1", runtimeapi.ContainerState_CONTAINER_EXITED, map[string]string{"io.kubernetes.container.name": "init"}),
		c("c3", "s2", runtimeapi.ContainerState_CONTAINER_CREATED, nil),
	}
	cases := []struct {
		name string
		f    *runtimeapi.ContainerFilter
		want string
	}{
		{"no filter", nil, "c1,c2,c3"},
		{"by sandbox", &runtimeapi.ContainerFilter{PodSandboxId: "s1"}, "c1,c2"},
		{"by state", &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_EXITED}}, "c2"},
		{"by label", &runtimeapi.ContainerFilter{LabelSelector: map[string]string{"io.kubernetes.container.name": "web"}}, "c1"},
		{"by ID and sandbox", &runtimeapi.ContainerFilter{Id: "c3", PodSandboxId: "s1"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ids []string
			for _, x := range Containers(all, tc.f) {
				ids = append(ids, x.Id)
			}
			if got := strings.Join(ids, ","); got != tc.want {
				t.Fatalf("selected %q, want %q", got, tc.want)
			}
		})
	}
}
