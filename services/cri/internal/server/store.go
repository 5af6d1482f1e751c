package server

import (
	"fmt"

	containerd "github.com/containerd/containerd/v2/client"
	"sort"
	"strings"
	"sync"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// sandbox is one pod sandbox as the runtime knows it. Fields other than
// ID and Config are guarded by the store's lock.
type sandbox struct {
	ID        string
	Config    *runtimeapi.PodSandboxConfig
	NetNS     string // "" on the host network
	Dir       string // resolv.conf, hosts, hostname
	CreatedAt time.Time
	IPs       []string
	State     runtimeapi.PodSandboxState
	PID       uint32 // of the pause process while it runs
	// networkReady is true between CNI ADD and CNI DEL.
	networkReady bool
}

func (s *sandbox) hostNetwork() bool {
	return s.Config.GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE
}

// container is one container of a sandbox.
type container struct {
	ID         string
	SandboxID  string
	Config     *runtimeapi.ContainerConfig
	Image      string // containerd's image name
	ImageID    string // the image's config digest
	ImageRef   string // repo@digest
	LogPath    string
	CreatedAt  time.Time
	StartedAt  time.Time
	FinishedAt time.Time
	ExitCode   int32
	Reason     string
	Message    string
	State      runtimeapi.ContainerState

	io *containerIO
	// task is the running task whose streams io copies.
	task containerd.Task
	// exited is closed once the process's exit is recorded.
	exited chan struct{}
}

// store holds the sandboxes and containers, with unique names.
type store struct {
	mu         sync.RWMutex
	sandboxes  map[string]*sandbox
	containers map[string]*container
	names      map[string]string // sandbox or container name -> ID
}

func newStore() *store {
	return &store{sandboxes: map[string]*sandbox{}, containers: map[string]*container{}, names: map[string]string{}}
}

// sandboxName is the name kubelet's sandboxes are unique by, as
// containerd's CRI makes it.
func sandboxName(m *runtimeapi.PodSandboxMetadata) string {
	return strings.Join([]string{m.GetName(), m.GetNamespace(), m.GetUid(), fmt.Sprint(m.GetAttempt())}, "_")
}

func containerName(c *runtimeapi.ContainerMetadata, sb *runtimeapi.PodSandboxMetadata) string {
	return strings.Join([]string{c.GetName(), sb.GetName(), sb.GetNamespace(), sb.GetUid(), fmt.Sprint(c.GetAttempt())}, "_")
}

// reserve claims name for id.
func (s *store) reserve(name, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if other, ok := s.names[name]; ok && other != id {
		return fmt.Errorf("%q is reserved for %s: %w", name, other, ErrExists)
	}
	s.names[name] = id
	return nil
}

func (s *store) release(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.names, name)
}

func (s *store) addSandbox(sb *sandbox) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sandboxes[sb.ID] = sb
	s.names[sandboxName(sb.Config.GetMetadata())] = sb.ID
}

func (s *store) addContainer(c *container) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.containers[c.ID] = c
	if sb := s.sandboxes[c.SandboxID]; sb != nil {
		s.names[containerName(c.Config.GetMetadata(), sb.Config.GetMetadata())] = c.ID
	}
}

func (s *store) deleteSandbox(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sb := s.sandboxes[id]; sb != nil {
		delete(s.names, sandboxName(sb.Config.GetMetadata()))
		delete(s.sandboxes, id)
	}
}

func (s *store) deleteContainer(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.containers[id]
	if c == nil {
		return
	}
	if sb := s.sandboxes[c.SandboxID]; sb != nil {
		delete(s.names, containerName(c.Config.GetMetadata(), sb.Config.GetMetadata()))
	}
	delete(s.containers, id)
}

// resolve finds the one ID in ids that equals or starts with prefix.
func resolve[T any](m map[string]T, prefix, what string) (string, error) {
	if prefix == "" {
		return "", fmt.Errorf("%s ID is empty: %w", what, ErrInvalid)
	}
	if _, ok := m[prefix]; ok {
		return prefix, nil
	}
	var found string
	for id := range m {
		if strings.HasPrefix(id, prefix) {
			if found != "" {
				return "", fmt.Errorf("%s ID %q: %w", what, prefix, ErrAmbiguous)
			}
			found = id
		}
	}
	if found == "" {
		return "", notFoundf("%s %q", what, prefix)
	}
	return found, nil
}

func (s *store) sandbox(id string) (*sandbox, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	full, err := resolve(s.sandboxes, id, "sandbox")
	if err != nil {
		return nil, err
	}
	return s.sandboxes[full], nil
}

func (s *store) container(id string) (*container, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	full, err := resolve(s.containers, id, "container")
	if err != nil {
		return nil, err
	}
	return s.containers[full], nil
}

// listSandboxes returns the sandboxes, oldest first.
func (s *store) listSandboxes() []*sandbox {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*sandbox, 0, len(s.sandboxes))
	for _, sb := range s.sandboxes {
		out = append(out, sb)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}

// listContainers returns the containers (of one sandbox when id is not
// empty), oldest first.
func (s *store) listContainers(sandboxID string) []*container {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*container, 0, len(s.containers))
	for _, c := range s.containers {
		if sandboxID == "" || c.SandboxID == sandboxID {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}

// update runs f under the store's write lock (for a record's fields).
func (s *store) update(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

// read runs f under the store's read lock.
func (s *store) read(f func()) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	f()
}
