package runtime

import (
	"context"
	"io"
	"time"
)

// Runtime runs pod sandboxes and their containers. Calls are safe for
// concurrent use. Errors wrap the sentinels in errors.go where one fits.
type Runtime interface {
	// Version names the runtime ("containerd", "v2.4.2").
	Version(ctx context.Context) (name, version string, err error)
	// Status is nil when the runtime and its pod network are ready, else
	// why not (ErrRuntimeNotReady, ErrNetworkNotReady).
	Status(ctx context.Context) error
	// UpdatePodCIDR tells the runtime the node's pod subnet (for its CNI
	// configuration).
	UpdatePodCIDR(ctx context.Context, cidr string) error

	// RunPodSandbox creates and starts the pod's sandbox: a network
	// namespace of its own (unless HostNetwork) held open by a pause
	// container, attached to the pod network by the runtime (CNI ADD),
	// and returns it with its IPs.
	RunPodSandbox(ctx context.Context, cfg *SandboxConfig) (*Sandbox, error)
	// StopPodSandbox stops the sandbox's containers and its pause
	// container and detaches it from the pod network (CNI DEL). Stopping a
	// stopped or missing sandbox is not an error.
	StopPodSandbox(ctx context.Context, id string) error
	// RemovePodSandbox deletes a stopped sandbox; missing is not an error.
	RemovePodSandbox(ctx context.Context, id string) error
	// ListPodSandboxes lists sandboxes, of one pod when podUID is not "".
	ListPodSandboxes(ctx context.Context, podUID string) ([]*Sandbox, error)

	// CreateContainer creates a container in a sandbox from an image that
	// is present (ErrImageNotPresent otherwise). cfg.Sandbox is the config
	// the sandbox was run with.
	CreateContainer(ctx context.Context, sandbox *Sandbox, cfg *ContainerConfig) (id string, err error)
	StartContainer(ctx context.Context, id string) error
	// StopContainer sends the stop signal and, after timeout, SIGKILL; it
	// returns once the process has exited. Stopping a stopped container is
	// not an error.
	StopContainer(ctx context.Context, id string, timeout time.Duration) error
	// RemoveContainer deletes a container (stopping it first with SIGKILL).
	RemoveContainer(ctx context.Context, id string) error
	// ListContainers lists containers, of one pod when podUID is not "".
	ListContainers(ctx context.Context, podUID string) ([]*Container, error)

	// ExecSync runs cmd in a running container and waits up to timeout.
	ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (*ExecResult, error)
	// Exec runs a command with streams attached, until it exits or ctx ends.
	Exec(ctx context.Context, id string, opts ExecOptions) (exitCode int, err error)
	// PortForward connects stream to port on 127.0.0.1 inside the
	// sandbox's network namespace (the host's with HostNetwork) and copies
	// both ways until either side closes or ctx ends; it closes stream
	// before it returns. A sandbox that is missing is ErrNotFound.
	PortForward(ctx context.Context, podSandboxID string, port int32, stream io.ReadWriteCloser) error

	// PullImage fetches and unpacks ref and returns its image ID.
	PullImage(ctx context.Context, ref string) (imageID string, err error)
	// ImageStatus returns the image if present, ErrNotFound otherwise.
	ImageStatus(ctx context.Context, ref string) (*Image, error)
	ListImages(ctx context.Context) ([]*Image, error)
}

// PodRef names a pod on the runtime's objects.
type PodRef struct {
	UID       string
	Name      string
	Namespace string
}

// SandboxConfig is what RunPodSandbox needs.
type SandboxConfig struct {
	Pod PodRef
	// Hostname is empty with HostNetwork (the node's).
	Hostname    string
	HostNetwork bool
	// Attempt counts the sandboxes this pod had before.
	Attempt int
	// LogDir is the pod's log directory; container log paths are
	// relative to it.
	LogDir string
	// DNS is the pod's resolver configuration (nil: the runtime's default).
	DNS *DNSConfig
	// Ports are the pod's hostPorts.
	Ports []PortMapping
	// Labels and Annotations are the pod's.
	Labels, Annotations map[string]string
	// CgroupParent is the pod's parent cgroup ("": the runtime's choice).
	CgroupParent string
}

// DNSConfig is a sandbox's resolv.conf.
type DNSConfig struct {
	Servers, Searches, Options []string
}

// PortMapping is one hostPort.
type PortMapping struct {
	// Protocol is "TCP", "UDP" or "SCTP".
	Protocol      string
	ContainerPort int32
	HostPort      int32
	HostIP        string
}

// SandboxState is whether the pause container runs.
type SandboxState string

const (
	SandboxReady    SandboxState = "Ready"
	SandboxNotReady SandboxState = "NotReady"
)

// Sandbox is one pod sandbox.
type Sandbox struct {
	ID          string
	Pod         PodRef
	State       SandboxState
	CreatedAt   time.Time
	Attempt     int
	HostNetwork bool
	// IPs the pod network gave the sandbox (IPv4 first; none with
	// HostNetwork).
	IPs []string
}

// Mount binds a host path into a container.
type Mount struct {
	HostPath      string
	ContainerPath string
	ReadOnly      bool
}

// Resources become the container's cgroup limits.
type Resources struct {
	// CPUShares from the cpu request (1024 per core; at least 2).
	CPUShares uint64
	// CPUQuota and CPUPeriod from the cpu limit (microseconds); 0: none.
	CPUQuota  int64
	CPUPeriod uint64
	// MemoryLimit in bytes from the memory limit; 0: none.
	MemoryLimit int64
}

// ContainerConfig is what CreateContainer needs.
type ContainerConfig struct {
	Name  string
	Image string
	// Command replaces the image's entrypoint and Args its cmd, as in a
	// pod spec; either may be empty to keep the image's.
	Command    []string
	Args       []string
	Env        []string // "KEY=value"
	WorkingDir string
	Mounts     []Mount
	Resources  Resources
	Attempt    int
	Init       bool
	Hash       string
	// LogPath is relative to the sandbox's LogDir ("<name>/<attempt>.log").
	LogPath string
	// Sandbox is the config the container's sandbox was run with.
	Sandbox *SandboxConfig
	TTY     bool
	Stdin   bool
}

// ContainerState is a container's state in the runtime.
type ContainerState string

const (
	ContainerCreated ContainerState = "Created"
	ContainerRunning ContainerState = "Running"
	ContainerExited  ContainerState = "Exited"
	ContainerUnknown ContainerState = "Unknown"
)

// Container is one container instance.
type Container struct {
	ID        string
	SandboxID string
	Pod       PodRef
	Name      string
	Attempt   int
	Init      bool
	Hash      string
	// Image is the image as the spec named it; ImageID what ran.
	Image      string
	ImageID    string
	State      ContainerState
	CreatedAt  time.Time
	StartedAt  time.Time
	FinishedAt time.Time
	ExitCode   int
	// Reason for an exited container: "Completed", "Error", "OOMKilled".
	Reason  string
	Message string
	// LogPath is the log file's absolute path.
	LogPath string
}

// Image is an image on the node.
type Image struct {
	// ID is the image's digest ("sha256:...").
	ID          string
	RepoTags    []string
	RepoDigests []string
	Size        int64
}

// ExecResult is the outcome of ExecSync.
type ExecResult struct {
	Stdout, Stderr []byte
	ExitCode       int
}

// TermSize is a terminal's size.
type TermSize struct{ Width, Height uint16 }

// ExecOptions are the streams of an interactive exec.
type ExecOptions struct {
	Cmd    []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	TTY    bool
	Resize <-chan TermSize
}
