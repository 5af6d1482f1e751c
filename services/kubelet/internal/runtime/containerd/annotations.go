package containerd

// OCI spec annotations on the sandbox and every container of a pod, with
// the names and values containerd's CRI gives them, so a container's spec
// reads as it does on a Kubernetes node.
//
// The sandbox ID also decides which runc shim runs a task: the shim reads
// annotationSandboxID from the spec and serves every task that names the
// same sandbox from one process, the one the pause container started. A
// pod's init and app containers then start without a shim daemon of their
// own, and the shim exits when the pod's last task is deleted.
const (
	annotationSandboxID     = "io.kubernetes.cri.sandbox-id"
	annotationContainerType = "io.kubernetes.cri.container-type"

	containerTypeSandbox   = "sandbox"
	containerTypeContainer = "container"
)

// podAnnotations are the annotations of a container of the sandbox's pod
// (containerTypeSandbox for the pause container itself).
func podAnnotations(sandboxID, containerType string) map[string]string {
	return map[string]string{
		annotationSandboxID:     sandboxID,
		annotationContainerType: containerType,
	}
}
