package cni

// PodNetwork is what CNI is told about a sandbox.
type PodNetwork struct {
	Name, Namespace, UID string
	SandboxID            string
	// NetNS is the path of the sandbox's network namespace.
	NetNS string
	// PortMappings are the portmap plugin's portMappings capability.
	PortMappings []PortMapping
}

// PortMapping is one hostPort of the pod, as the portmap plugin reads it.
type PortMapping struct {
	HostPort      int32  `json:"hostPort"`
	ContainerPort int32  `json:"containerPort"`
	Protocol      string `json:"protocol"`
	HostIP        string `json:"hostIP,omitempty"`
}
