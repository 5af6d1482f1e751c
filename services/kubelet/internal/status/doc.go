// Package status computes and writes pods' status. Compute is pure: from
// the pod (its spec and the status last reported), what the runtime holds
// for it (sandboxes, container instances), the probes' results and the
// reasons the last sync left containers waiting (ErrImagePull,
// CrashLoopBackOff, ...), it derives the whole PodStatus: phase,
// conditions (PodScheduled, PodReadyToStartContainers, Initialized,
// ContainersReady, Ready) with stable transition times, podIP(s),
// hostIP(s), startTime and each container's state, lastState, ready,
// started, restartCount, image, imageID and containerID.
//
// Manager keeps the latest computed status of every pod and writes it to
// the status subresource only when it differs from what the apiserver
// has, from a rate-limited queue; it also performs the final deletion
// (grace period 0) of a pod the kubelet has finished terminating. Static
// pods' statuses go to their mirror pods.
package status
