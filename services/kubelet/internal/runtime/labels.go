package runtime

// Labels on every sandbox and container the kubelet creates. The first
// four are Kubernetes' own (what dockershim and the CRI put on
// containers), so `ctr -n k8s.io containers ls` reads the way it does on a
// Kubernetes node.
const (
	LabelPodUID        = "io.kubernetes.pod.uid"
	LabelPodName       = "io.kubernetes.pod.name"
	LabelPodNamespace  = "io.kubernetes.pod.namespace"
	LabelContainerName = "io.kubernetes.container.name"
	// LabelContainerHash is a hash of the container's spec: a running
	// container whose spec changed is restarted.
	LabelContainerHash = "io.kubernetes.container.hash"
	// LabelAttempt is the restart count: 0 for the first instance.
	LabelAttempt = "io.kubernetes.container.restartCount"

	// LabelKind is "sandbox" or "container".
	LabelKind = "podline.dev/kind"
	// LabelSandboxID names the sandbox a container runs in.
	LabelSandboxID = "podline.dev/sandbox-id"
	// LabelInit is "true" on init containers.
	LabelInit = "podline.dev/init"
	// LabelNetNS is the sandbox's network namespace path ("" for host network).
	LabelNetNS = "podline.dev/netns"
	// LabelPodIPs is the sandbox's IPs, comma separated, once CNI gave them.
	LabelPodIPs = "podline.dev/pod-ips"
	// LabelHostNetwork is "true" on a sandbox in the node's network namespace.
	LabelHostNetwork = "podline.dev/host-network"
	// LabelLogPath is where a container's stdout and stderr go.
	LabelLogPath = "podline.dev/log-path"
	// LabelImage is the image as the pod spec names it.
	LabelImage = "podline.dev/image"
	// LabelStartedAt, LabelFinishedAt and LabelExitCode record a process's
	// life (RFC 3339 with nanoseconds; decimal) so it survives the deletion
	// of its task and a restart of the kubelet or the runtime.
	LabelStartedAt  = "podline.dev/started-at"
	LabelFinishedAt = "podline.dev/finished-at"
	LabelExitCode   = "podline.dev/exit-code"
	LabelReason     = "podline.dev/reason"

	KindSandbox   = "sandbox"
	KindContainer = "container"
)
