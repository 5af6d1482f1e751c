// Package kuberuntime turns a pod spec into runtime work, as the real
// kubelet's kuberuntime does over the CRI. ComputePodActions is the pure
// core: from the pod and what the runtime holds for it (PodStatus) and the
// probes' results it decides whether the sandbox must be (re)created,
// which init container runs next, which containers start and which are
// killed (a failed liveness or startup probe, a changed spec). Manager
// carries the decision out against the Runtime interface: the sandbox
// (with its hostname, DNS and hostPorts from poddns; the runtime attaches
// it to the pod network), the managed /etc/hosts, image pull by
// imagePullPolicy with ImagePullBackOff,
// container creation with env, mounts and cgroup limits, start with
// CrashLoopBackOff between restarts, and graceful termination (preStop,
// SIGTERM, grace period, SIGKILL) with the events Kubernetes records.
// Each step is a span under the caller's sync span.
package kuberuntime
