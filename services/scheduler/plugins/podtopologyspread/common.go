package podtopologyspread

import (
	"podline.dev/pkg/labels"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/scheduler/internal/framework"
	"podline.dev/services/scheduler/plugins/helper"
)

// whenUnsatisfiable values and node policies, as in core/v1.
const (
	DoNotSchedule  = "DoNotSchedule"
	ScheduleAnyway = "ScheduleAnyway"
	PolicyHonor    = "Honor"
	PolicyIgnore   = "Ignore"
	labelHostname  = "kubernetes.io/hostname"
)

// constraint is a parsed TopologySpreadConstraint.
type constraint struct {
	MaxSkew     int32
	TopologyKey string
	Selector    labels.Selector
	// countKeys name the selector's key=value requirements for
	// NodeInfo.PodLabelCount; onlyKey is true when that is all the selector is.
	countKeys          []string
	onlyKey            bool
	MinDomains         int32
	NodeAffinityPolicy string
	NodeTaintsPolicy   string
}

// constraints parses pod's constraints with the given whenUnsatisfiable.
func constraints(pod *corev1.Pod, when string) ([]constraint, error) {
	var out []constraint
	for _, c := range pod.GetSpec().GetTopologySpreadConstraints() {
		if c.GetWhenUnsatisfiable() != when {
			continue
		}
		sel, err := labels.FromLabelSelector(withMatchLabelKeys(pod, c))
		if err != nil {
			return nil, err
		}
		tc := constraint{
			MaxSkew: c.GetMaxSkew(), TopologyKey: c.GetTopologyKey(), Selector: sel,
			MinDomains: 1, NodeAffinityPolicy: PolicyHonor, NodeTaintsPolicy: PolicyIgnore,
		}
		if c.MinDomains != nil && *c.MinDomains > 0 {
			tc.MinDomains = *c.MinDomains
		}
		if c.NodeAffinityPolicy != nil {
			tc.NodeAffinityPolicy = *c.NodeAffinityPolicy
		}
		if c.NodeTaintsPolicy != nil {
			tc.NodeTaintsPolicy = *c.NodeTaintsPolicy
		}
		reqs := sel.Requirements()
		for _, r := range reqs {
			if r.Operator() == labels.Equals || (r.Operator() == labels.In && len(r.Values()) == 1) {
				tc.countKeys = append(tc.countKeys, framework.PodLabelKey(pod.GetMetadata().GetNamespace(), r.Key(), r.Values()[0]))
			}
		}
		tc.onlyKey = len(reqs) == 1 && len(tc.countKeys) == 1
		out = append(out, tc)
	}
	return out, nil
}

func withMatchLabelKeys(pod *corev1.Pod, c *corev1.TopologySpreadConstraint) *metav1.LabelSelector {
	ls := c.GetLabelSelector()
	if ls == nil || len(c.GetMatchLabelKeys()) == 0 {
		return ls
	}
	out := &metav1.LabelSelector{MatchLabels: ls.GetMatchLabels(), MatchExpressions: append([]*metav1.LabelSelectorRequirement(nil), ls.GetMatchExpressions()...)}
	for _, k := range c.GetMatchLabelKeys() {
		if v, ok := pod.GetMetadata().GetLabels()[k]; ok {
			out.MatchExpressions = append(out.MatchExpressions, &metav1.LabelSelectorRequirement{Key: k, Operator: "In", Values: []string{v}})
		}
	}
	return out
}

// nodeHasKeys reports whether node has every constraint's topology key.
func nodeHasKeys(node *corev1.Node, cs []constraint) bool {
	l := node.GetMetadata().GetLabels()
	for _, c := range cs {
		if _, ok := l[c.TopologyKey]; !ok {
			return false
		}
	}
	return true
}

// nodeCounts reports whether a node's pods count towards c's domains, by
// the constraint's node affinity and taints policies.
func nodeCounts(c constraint, req helper.RequiredNodeAffinity, pod *corev1.Pod, node *corev1.Node) bool {
	if c.NodeAffinityPolicy == PolicyHonor && !req.Match(node) {
		return false
	}
	if c.NodeTaintsPolicy == PolicyHonor {
		if _, untolerated := helper.FindMatchingUntoleratedTaint(node.GetSpec().GetTaints(), pod.GetSpec().GetTolerations(), helper.DoNotScheduleTaints); untolerated {
			return false
		}
	}
	return true
}

// countPodsMatchSelector counts the pods of ns on a node that match c's
// selector, ignoring terminating ones. A selector with key=value
// requirements is answered from the node's label counts when one of them
// is 0, or when it is the only requirement; otherwise the pods are walked.
func countPodsMatchSelector(ni *framework.NodeInfo, c *constraint, ns string) int {
	if c.Selector.Empty() {
		return 0 // Kubernetes: an empty selector matches nothing here
	}
	for _, k := range c.countKeys {
		n := ni.PodLabelCount(k)
		if n == 0 || c.onlyKey {
			return n
		}
	}
	n := 0
	for _, p := range ni.Pods {
		md := p.Pod.GetMetadata()
		if md.GetDeletionTimestamp() != nil || md.GetNamespace() != ns {
			continue
		}
		if c.Selector.Matches(md.GetLabels()) {
			n++
		}
	}
	return n
}
