package runtime

// Labels and annotations on the sandboxes and containers the kubelet
// creates through CRI. The first four are Kubernetes' own labels, so
// `crictl ps` and `crictl pods` read the way they do on a Kubernetes
// node; the hash and the restart count are Kubernetes' annotation keys.
const (
	LabelPodUID        = "io.kubernetes.pod.uid"
	LabelPodName       = "io.kubernetes.pod.name"
	LabelPodNamespace  = "io.kubernetes.pod.namespace"
	LabelContainerName = "io.kubernetes.container.name"
	// LabelContainerHash (an annotation) is a hash of the container's
	// spec: a running container whose spec changed is restarted.
	LabelContainerHash = "io.kubernetes.container.hash"
	// LabelAttempt (an annotation) is the restart count: 0 for the first
	// instance.
	LabelAttempt = "io.kubernetes.container.restartCount"

	// LabelInit is "true" on init containers.
	LabelInit = "podline.dev/init"
	// LabelHostNetwork is "true" on a sandbox in the node's network namespace.
	LabelHostNetwork = "podline.dev/host-network"
	// LabelImage (an annotation) is the image as the pod spec names it.
	LabelImage = "podline.dev/image"
)
