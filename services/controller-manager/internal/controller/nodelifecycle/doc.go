// Package nodelifecycle is the node lifecycle controller: it watches each
// Node's heartbeats (its Lease kube-node-lease/<node> and its Ready
// condition) and, when none moved for the grace period (40 s), marks the
// node's conditions Unknown ("Kubelet stopped posting node status."), its
// pods not ready, and taints it node.kubernetes.io/unreachable:NoExecute
// (node.kubernetes.io/not-ready:NoExecute when the kubelet reports Ready
// False); the taints go when the node is Ready again. Its eviction half
// (Kubernetes' taint eviction controller) deletes pods on a NoExecute-
// tainted node that do not tolerate the taint, at once, or after the
// tolerationSeconds of the tolerations they have.
//
// health.go is the pure core (heartbeat bookkeeping on the controller's own
// clock, the conditions and taints a node should have, when a pod must go);
// controller.go runs the periodic health check and the eviction queue.
package nodelifecycle
