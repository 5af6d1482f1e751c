// Package deployment is the deployment controller: it keeps, for each
// Deployment, ReplicaSets named <deployment>-<pod-template-hash> whose
// sizes move from the old template to the new one by the RollingUpdate
// (maxSurge, maxUnavailable) or Recreate strategy, scales them with the
// deployment (proportionally in the middle of a rollout), stops rolling
// while paused, numbers revisions (deployment.kubernetes.io/revision, so a
// rollback is just applying an old template), deletes old ReplicaSets
// beyond revisionHistoryLimit, and reports status with the Progressing and
// Available conditions and progressDeadlineSeconds.
//
// rollout.go is the pure core: Sync(Input) returns the Plan of writes one
// sync makes, computed from the deployment, its ReplicaSets and the time
// alone (Kubernetes' sync, rolling, recreate and progress logic); util.go
// holds its arithmetic. controller.go is the I/O around it: informers,
// event handlers that enqueue keys, adoption of ReplicaSets, and execution
// of the plan through the apiserver, with events ScalingReplicaSet.
package deployment
