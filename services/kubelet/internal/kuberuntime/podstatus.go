package kuberuntime

import (
	"context"
	"sort"

	"podline.dev/services/kubelet/internal/runtime"
)

// PodStatus is what the runtime holds for one pod: sandboxes newest
// first, container instances newest first.
type PodStatus struct {
	UID        string
	Sandboxes  []*runtime.Sandbox
	Containers []*runtime.Container
}

// NewPodStatus sorts a pod's runtime objects newest first.
func NewPodStatus(uid string, sbs []*runtime.Sandbox, cs []*runtime.Container) *PodStatus {
	sbs = append([]*runtime.Sandbox(nil), sbs...)
	cs = append([]*runtime.Container(nil), cs...)
	sort.SliceStable(sbs, func(i, j int) bool {
		if sbs[i].Attempt != sbs[j].Attempt {
			return sbs[i].Attempt > sbs[j].Attempt
		}
		return sbs[i].CreatedAt.After(sbs[j].CreatedAt)
	})
	sort.SliceStable(cs, func(i, j int) bool {
		if !cs[i].CreatedAt.Equal(cs[j].CreatedAt) {
			return cs[i].CreatedAt.After(cs[j].CreatedAt)
		}
		return cs[i].Attempt > cs[j].Attempt
	})
	return &PodStatus{UID: uid, Sandboxes: sbs, Containers: cs}
}

// Latest is the newest instance of a container, or nil.
func (s *PodStatus) Latest(name string) *runtime.Container {
	for _, c := range s.Containers {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// LatestExited is the newest exited instance of a container, or nil.
func (s *PodStatus) LatestExited(name string) *runtime.Container {
	for _, c := range s.Containers {
		if c.Name == name && c.State == runtime.ContainerExited {
			return c
		}
	}
	return nil
}

// ReadySandbox is the newest ready sandbox, or nil.
func (s *PodStatus) ReadySandbox() *runtime.Sandbox {
	for _, sb := range s.Sandboxes {
		if sb.State == runtime.SandboxReady {
			return sb
		}
	}
	return nil
}

// Running reports whether any container or sandbox still runs.
func (s *PodStatus) Running() bool {
	for _, c := range s.Containers {
		if c.State == runtime.ContainerRunning || c.State == runtime.ContainerUnknown {
			return true
		}
	}
	return s.ReadySandbox() != nil
}

// GetPodStatus reads a pod's runtime objects.
func GetPodStatus(ctx context.Context, rt runtime.Runtime, uid string) (*PodStatus, error) {
	sbs, err := rt.ListPodSandboxes(ctx, uid)
	if err != nil {
		return nil, err
	}
	cs, err := rt.ListContainers(ctx, uid)
	if err != nil {
		return nil, err
	}
	return NewPodStatus(uid, sbs, cs), nil
}
