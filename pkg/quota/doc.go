// Package quota is what ResourceQuota counts, in one place for the two
// sides of Kubernetes' quota system: the apiserver's ResourceQuota
// admission, which charges a create against status.used, and the
// controller-manager's resourcequota controller, which recomputes
// status.used from what the namespace holds.
//
// A Usage maps a quota's resource names ("pods", "requests.cpu", "cpu",
// "count/configmaps") to amounts in milli-units. PodUsage is what one pod
// counts for, under every name Kubernetes' pod evaluator answers to (so
// "cpu" and "requests.cpu" both appear); PodCounts says whether a pod
// counts at all (not terminal, not stuck terminating past its grace);
// CountedResource maps an object-count name to the resource it counts.
// Format and Parse turn amounts into quantities and back, as status.used
// carries them.
package quota
