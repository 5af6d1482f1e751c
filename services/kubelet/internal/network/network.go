package network

import "context"

// Network attaches pod sandboxes to the pod network.
type Network interface {
	// SetUpPod attaches the sandbox's network namespace and returns its
	// IPs (IPv4 first).
	SetUpPod(ctx context.Context, pod *PodNetwork) ([]string, error)
	// TearDownPod detaches it and releases its IPs; tearing down a pod
	// that is not attached, or whose namespace is gone, is not an error.
	TearDownPod(ctx context.Context, pod *PodNetwork) error
	// Status is nil once pods can be attached, else why not (ErrNotReady).
	Status() error
}

// PodNetwork names one sandbox's attachment.
type PodNetwork struct {
	Name, Namespace, UID string
	// SandboxID is the CNI container ID.
	SandboxID string
	// NetNS is the network namespace path.
	NetNS string
	// PortMappings are the pod's hostPorts.
	PortMappings []PortMapping
}

// PortMapping is one hostPort (the portmap plugin's capability argument).
type PortMapping struct {
	HostPort      int32  `json:"hostPort"`
	ContainerPort int32  `json:"containerPort"`
	Protocol      string `json:"protocol"`
	HostIP        string `json:"hostIP,omitempty"`
}
