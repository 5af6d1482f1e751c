// Package cache is the scheduler's picture of the cluster: every Node with
// the pods bound to it and what they request, kept from informer events,
// plus the pods the scheduler has assumed onto a node while their binding
// is in flight. An assumed pod counts on its node from the moment the
// scheduling cycle picks the node until the apiserver confirms the binding
// (the informer's update turns it into a bound pod) or the binding fails
// (ForgetPod).
//
// Each scheduling cycle reads a Snapshot, refreshed at the start of the
// cycle by UpdateSnapshot, which copies only the nodes changed since the
// last refresh (the cache keeps them in a dirty set; usually one node, the
// one the previous pod was assumed onto). The snapshot lists nodes
// interleaved by zone (node_tree.go), so that looking at a percentage of
// nodes still spreads across zones, and keeps two indexes plugins use
// instead of walking every node: nodes by the labels of their pods
// (PodLabelNodes) and node counts by topology value (TopologyValues).
package cache
