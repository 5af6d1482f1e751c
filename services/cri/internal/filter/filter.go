package filter

import (
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// idMatches is true when want is empty or a prefix of id.
func idMatches(id, want string) bool { return want == "" || strings.HasPrefix(id, want) }

// labelsMatch is true when every selector label is in labels.
func labelsMatch(labels, selector map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Sandboxes returns the sandboxes f selects, in their order.
func Sandboxes(in []*runtimeapi.PodSandbox, f *runtimeapi.PodSandboxFilter) []*runtimeapi.PodSandbox {
	if f == nil {
		return in
	}
	out := make([]*runtimeapi.PodSandbox, 0, len(in))
	for _, s := range in {
		if !idMatches(s.Id, f.Id) {
			continue
		}
		if f.State != nil && s.State != f.State.State {
			continue
		}
		if !labelsMatch(s.Labels, f.LabelSelector) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// Containers returns the containers f selects, in their order.
func Containers(in []*runtimeapi.Container, f *runtimeapi.ContainerFilter) []*runtimeapi.Container {
	if f == nil {
		return in
	}
	out := make([]*runtimeapi.Container, 0, len(in))
	for _, c := range in {
		if !idMatches(c.Id, f.Id) || !idMatches(c.PodSandboxId, f.PodSandboxId) {
			continue
		}
		if f.State != nil && c.State != f.State.State {
			continue
		}
		if !labelsMatch(c.Labels, f.LabelSelector) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// ContainerStats returns the containers a stats filter selects.
func ContainerStats(in []*runtimeapi.Container, f *runtimeapi.ContainerStatsFilter) []*runtimeapi.Container {
	if f == nil {
		return in
	}
	return Containers(in, &runtimeapi.ContainerFilter{Id: f.Id, PodSandboxId: f.PodSandboxId, LabelSelector: f.LabelSelector})
}

// SandboxStats returns the sandboxes a stats filter selects.
func SandboxStats(in []*runtimeapi.PodSandbox, f *runtimeapi.PodSandboxStatsFilter) []*runtimeapi.PodSandbox {
	if f == nil {
		return in
	}
	return Sandboxes(in, &runtimeapi.PodSandboxFilter{Id: f.Id, LabelSelector: f.LabelSelector})
}
