package helper

import (
	"podline.dev/pkg/labels"
	corev1 "podline.dev/proto/core/v1"
)

var nodeSelectorOps = map[string]labels.Operator{
	"In":           labels.In,
	"NotIn":        labels.NotIn,
	"Exists":       labels.Exists,
	"DoesNotExist": labels.DoesNotExist,
	"Gt":           labels.GreaterThan,
	"Lt":           labels.LessThan,
}

// NodeSelectorTerm is a parsed term: every requirement must hold.
type NodeSelectorTerm struct {
	labels labels.Selector
	fields labels.Selector // over {"metadata.name": node name}
	valid  bool
}

// NewNodeSelectorTerm parses a term; a term with no requirements, or one
// that does not parse, matches no node (as in Kubernetes).
func NewNodeSelectorTerm(t *corev1.NodeSelectorTerm) NodeSelectorTerm {
	if len(t.GetMatchExpressions()) == 0 && len(t.GetMatchFields()) == 0 {
		return NodeSelectorTerm{}
	}
	lr, ok := requirements(t.GetMatchExpressions())
	if !ok {
		return NodeSelectorTerm{}
	}
	fr, ok := requirements(t.GetMatchFields())
	if !ok {
		return NodeSelectorTerm{}
	}
	for _, f := range t.GetMatchFields() {
		if f.GetKey() != "metadata.name" {
			return NodeSelectorTerm{}
		}
	}
	return NodeSelectorTerm{labels: labels.NewSelector(lr...), fields: labels.NewSelector(fr...), valid: true}
}

func requirements(in []*corev1.NodeSelectorRequirement) ([]labels.Requirement, bool) {
	out := make([]labels.Requirement, 0, len(in))
	for _, e := range in {
		op, ok := nodeSelectorOps[e.GetOperator()]
		if !ok {
			return nil, false
		}
		r, err := labels.NewRequirement(e.GetKey(), op, e.GetValues())
		if err != nil {
			return nil, false
		}
		out = append(out, r)
	}
	return out, true
}

// Match reports whether node satisfies the term.
func (t NodeSelectorTerm) Match(node *corev1.Node) bool {
	if !t.valid {
		return false
	}
	return t.labels.Matches(node.GetMetadata().GetLabels()) &&
		t.fields.Matches(labels.Set{"metadata.name": node.GetMetadata().GetName()})
}

// NodeSelector is a parsed NodeSelector: any term may hold.
type NodeSelector []NodeSelectorTerm

// NewNodeSelector parses ns.
func NewNodeSelector(ns *corev1.NodeSelector) NodeSelector {
	out := make(NodeSelector, 0, len(ns.GetNodeSelectorTerms()))
	for _, t := range ns.GetNodeSelectorTerms() {
		out = append(out, NewNodeSelectorTerm(t))
	}
	return out
}

// Match reports whether any term matches node.
func (s NodeSelector) Match(node *corev1.Node) bool {
	for _, t := range s {
		if t.Match(node) {
			return true
		}
	}
	return false
}

// RequiredNodeAffinity is a pod's spec.nodeSelector and its required node affinity together.
type RequiredNodeAffinity struct {
	selector     labels.Selector
	nodeSelector NodeSelector
	hasAffinity  bool
}

// GetRequiredNodeAffinity parses pod's node constraints.
func GetRequiredNodeAffinity(pod *corev1.Pod) RequiredNodeAffinity {
	r := RequiredNodeAffinity{}
	if ns := pod.GetSpec().GetNodeSelector(); len(ns) > 0 {
		r.selector = labels.SelectorFromSet(ns)
	}
	if req := pod.GetSpec().GetAffinity().GetNodeAffinity().GetRequiredDuringSchedulingIgnoredDuringExecution(); req != nil {
		r.nodeSelector = NewNodeSelector(req)
		r.hasAffinity = true
	}
	return r
}

// Match reports whether node satisfies both.
func (r RequiredNodeAffinity) Match(node *corev1.Node) bool {
	if r.selector != nil && !r.selector.Matches(node.GetMetadata().GetLabels()) {
		return false
	}
	if r.hasAffinity && !r.nodeSelector.Match(node) {
		return false
	}
	return true
}
