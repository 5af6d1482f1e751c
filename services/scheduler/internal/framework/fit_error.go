package framework

import (
	"fmt"
	"sort"
	"strings"

	corev1 "podline.dev/proto/core/v1"
)

// NodeToStatus maps node names to why the pod does not fit there.
type NodeToStatus map[string]*Status

// Diagnosis explains a failed scheduling attempt.
type Diagnosis struct {
	// NodeToStatus has each rejected node's status.
	NodeToStatus NodeToStatus
	// UnschedulablePlugins rejected the pod somewhere.
	UnschedulablePlugins map[string]bool
	// PendingPlugins returned Pending.
	PendingPlugins map[string]bool
	// PreFilterMsg is set when a PreFilter plugin rejected the pod for every node.
	PreFilterMsg string
	// PostFilterMsg is what PostFilter (preemption) said.
	PostFilterMsg string
	// EvaluatedNodes is how many nodes were filtered.
	EvaluatedNodes int
}

// AddPlugin records plugin as a rejector.
func (d *Diagnosis) AddPlugin(status *Status) {
	if status.Plugin() == "" {
		return
	}
	if status.Code() == Pending {
		if d.PendingPlugins == nil {
			d.PendingPlugins = map[string]bool{}
		}
		d.PendingPlugins[status.Plugin()] = true
		return
	}
	if d.UnschedulablePlugins == nil {
		d.UnschedulablePlugins = map[string]bool{}
	}
	d.UnschedulablePlugins[status.Plugin()] = true
}

// Messages Kubernetes uses.
const (
	// NoNodeAvailableMsg starts every FitError.
	NoNodeAvailableMsg = "0/%v nodes are available"
	separatorFormat    = " %v."
)

// FitError is a pod that fits no node.
type FitError struct {
	Pod         *corev1.Pod
	NumAllNodes int
	Diagnosis   Diagnosis
}

// Error is Kubernetes' message: "0/3 nodes are available: 1 node(s) had
// untolerated taint {node-role.kubernetes.io/control-plane: }, 2
// Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption
// victims found for incoming pod." Reasons are counted over nodes and
// sorted; a PreFilter message replaces the per-node reasons; the PostFilter
// message follows. (Kubernetes prints ".." when the PostFilter message
// already ends in a period; podline prints one.)
func (f *FitError) Error() string {
	msg := fmt.Sprintf(NoNodeAvailableMsg+":", f.NumAllNodes)
	if pre := f.Diagnosis.PreFilterMsg; pre != "" {
		msg += fmt.Sprintf(separatorFormat, pre)
	} else if hist := ReasonHistogram(f.Diagnosis.NodeToStatus); hist != "" {
		msg += fmt.Sprintf(separatorFormat, hist)
	}
	if post := f.Diagnosis.PostFilterMsg; post != "" {
		msg += " " + strings.TrimSuffix(post, ".") + "."
	}
	return msg
}

// ReasonHistogram counts each reason over nodes and returns "1 reason a, 2
// reason b", sorted as strings (as Kubernetes does).
func ReasonHistogram(m NodeToStatus) string {
	counts := map[string]int{}
	for _, s := range m {
		for _, r := range s.Reasons() {
			counts[r]++
		}
	}
	out := make([]string, 0, len(counts))
	for r, n := range counts {
		out = append(out, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
