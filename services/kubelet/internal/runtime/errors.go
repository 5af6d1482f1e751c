package runtime

import "errors"

var (
	// ErrNotFound: no sandbox, container or image by that name.
	ErrNotFound = errors.New("not found")
	// ErrImageNotPresent: the image a container needs is not on the node.
	ErrImageNotPresent = errors.New("image not present")
	// ErrNotRunning: the container has no running process (exec, attach).
	ErrNotRunning = errors.New("container is not running")
	// ErrSandboxNotReady: the sandbox's pause container has stopped, so
	// its network namespace is gone (port forwarding).
	ErrSandboxNotReady = errors.New("pod sandbox is not ready")
	// ErrRuntimeNotReady: the runtime reports RuntimeReady=false or does
	// not answer.
	ErrRuntimeNotReady = errors.New("container runtime is not ready")
	// ErrNetworkNotReady: the runtime reports NetworkReady=false (no CNI
	// configuration yet).
	ErrNetworkNotReady = errors.New("container runtime network not ready")
)
