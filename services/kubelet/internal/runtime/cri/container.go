package cri

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"

	"podline.dev/services/kubelet/internal/runtime"
)

// containerConfig is CRI's ContainerConfig of the kubelet's: the pod's
// labels as Kubernetes puts them on containers, and in annotations what
// CRI has no field for (the spec's hash, the restart count, the image as
// the spec names it).
func containerConfig(sb *runtime.Sandbox, cfg *runtime.ContainerConfig) *criv1.ContainerConfig {
	labels := map[string]string{
		runtime.LabelPodUID: sb.Pod.UID, runtime.LabelPodName: sb.Pod.Name, runtime.LabelPodNamespace: sb.Pod.Namespace,
		runtime.LabelContainerName: cfg.Name,
	}
	if cfg.Init {
		labels[runtime.LabelInit] = "true"
	}
	c := &criv1.ContainerConfig{
		Metadata:   &criv1.ContainerMetadata{Name: cfg.Name, Attempt: uint32(cfg.Attempt)},
		Image:      &criv1.ImageSpec{Image: cfg.Image, UserSpecifiedImage: cfg.Image},
		Command:    cfg.Command,
		Args:       cfg.Args,
		WorkingDir: cfg.WorkingDir,
		Labels:     labels,
		Annotations: map[string]string{
			runtime.LabelContainerHash: cfg.Hash, runtime.LabelAttempt: strconv.Itoa(cfg.Attempt), runtime.LabelImage: cfg.Image,
		},
		LogPath:   cfg.LogPath,
		Stdin:     cfg.Stdin,
		StdinOnce: false,
		Tty:       cfg.TTY,
		Linux: &criv1.LinuxContainerConfig{
			Resources: &criv1.LinuxContainerResources{
				CpuShares: int64(cfg.Resources.CPUShares), CpuQuota: cfg.Resources.CPUQuota,
				CpuPeriod: int64(cfg.Resources.CPUPeriod), MemoryLimitInBytes: cfg.Resources.MemoryLimit,
			},
			SecurityContext: &criv1.LinuxContainerSecurityContext{NamespaceOptions: namespaceOptions(sb.HostNetwork)},
		},
	}
	for _, e := range cfg.Env {
		k, v, _ := strings.Cut(e, "=")
		c.Envs = append(c.Envs, &criv1.KeyValue{Key: k, Value: []byte(v)})
	}
	for _, m := range cfg.Mounts {
		c.Mounts = append(c.Mounts, &criv1.Mount{ContainerPath: m.ContainerPath, HostPath: m.HostPath, Readonly: m.ReadOnly})
	}
	return c
}

func (r *Runtime) CreateContainer(ctx context.Context, sb *runtime.Sandbox, cfg *runtime.ContainerConfig) (string, error) {
	sbCfg := cfg.Sandbox
	if sbCfg == nil {
		sbCfg = &runtime.SandboxConfig{Pod: sb.Pod, HostNetwork: sb.HostNetwork, Attempt: sb.Attempt}
	}
	resp, err := r.rt.CreateContainer(ctx, &criv1.CreateContainerRequest{
		PodSandboxId: sb.ID, Config: containerConfig(sb, cfg), SandboxConfig: sandboxConfig(sbCfg),
	})
	if err != nil {
		if status.Code(err) == codes.NotFound && strings.Contains(status.Convert(err).Message(), "image") {
			return "", fmt.Errorf("create container %s: %w: %s", cfg.Name, runtime.ErrImageNotPresent, status.Convert(err).Message())
		}
		return "", wrap(err, "create container "+cfg.Name)
	}
	return resp.GetContainerId(), nil
}

func (r *Runtime) StartContainer(ctx context.Context, id string) error {
	_, err := r.rt.StartContainer(ctx, &criv1.StartContainerRequest{ContainerId: id})
	return wrap(err, "start container "+id)
}

func (r *Runtime) StopContainer(ctx context.Context, id string, timeout time.Duration) error {
	_, err := r.rt.StopContainer(ctx, &criv1.StopContainerRequest{ContainerId: id, Timeout: seconds(timeout)})
	if notFound(err) {
		return nil
	}
	return wrap(err, "stop container "+id)
}

func (r *Runtime) RemoveContainer(ctx context.Context, id string) error {
	_, err := r.rt.RemoveContainer(ctx, &criv1.RemoveContainerRequest{ContainerId: id})
	r.mu.Lock()
	delete(r.statuses, id)
	r.mu.Unlock()
	if notFound(err) {
		return nil
	}
	return wrap(err, "remove container "+id)
}

// ListContainers lists the kubelet's containers with their status
// (ContainerStatus, cached while the container's state stays the same).
func (r *Runtime) ListContainers(ctx context.Context, podUID string) ([]*runtime.Container, error) {
	sel := map[string]string{}
	if podUID != "" {
		sel[runtime.LabelPodUID] = podUID
	}
	resp, err := r.rt.ListContainers(ctx, &criv1.ListContainersRequest{Filter: &criv1.ContainerFilter{LabelSelector: sel}})
	if err != nil {
		return nil, wrap(err, "list containers")
	}
	out := make([]*runtime.Container, 0, len(resp.GetContainers()))
	for _, c := range resp.GetContainers() {
		if _, ok := c.GetLabels()[runtime.LabelPodUID]; !ok {
			continue
		}
		st, err := r.containerStatus(ctx, c.GetId(), c.GetState())
		if notFound(err) {
			continue // removed since the list
		}
		if err != nil {
			return nil, wrap(err, "container status "+c.GetId())
		}
		out = append(out, fromContainerStatus(c.GetPodSandboxId(), st))
	}
	if podUID == "" { // a full list: forget containers removed behind our back
		seen := map[string]bool{}
		for _, c := range resp.GetContainers() {
			seen[c.GetId()] = true
		}
		r.mu.Lock()
		for id := range r.statuses {
			if !seen[id] {
				delete(r.statuses, id)
			}
		}
		r.mu.Unlock()
	}
	return out, nil
}

func (r *Runtime) containerStatus(ctx context.Context, id string, state criv1.ContainerState) (*criv1.ContainerStatus, error) {
	r.mu.Lock()
	st := r.statuses[id]
	r.mu.Unlock()
	if st != nil && st.GetState() == state {
		return st, nil
	}
	resp, err := r.rt.ContainerStatus(ctx, &criv1.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		return nil, err
	}
	st = resp.GetStatus()
	if st.GetState() == state {
		r.mu.Lock()
		r.statuses[id] = st
		r.mu.Unlock()
	}
	return st, nil
}

func fromContainerStatus(sandboxID string, s *criv1.ContainerStatus) *runtime.Container {
	l, a := s.GetLabels(), s.GetAnnotations()
	c := &runtime.Container{
		ID:        s.GetId(),
		SandboxID: sandboxID,
		Pod:       runtime.PodRef{UID: l[runtime.LabelPodUID], Name: l[runtime.LabelPodName], Namespace: l[runtime.LabelPodNamespace]},
		Name:      s.GetMetadata().GetName(),
		Attempt:   int(s.GetMetadata().GetAttempt()),
		Init:      l[runtime.LabelInit] == "true",
		Hash:      a[runtime.LabelContainerHash],
		Image:     a[runtime.LabelImage],
		ImageID:   s.GetImageRef(),
		State:     containerState(s.GetState()),
		CreatedAt: unixNano(s.GetCreatedAt()),
		StartedAt: unixNano(s.GetStartedAt()),
		ExitCode:  int(s.GetExitCode()),
		Reason:    s.GetReason(),
		Message:   s.GetMessage(),
		LogPath:   s.GetLogPath(),
	}
	if c.Image == "" {
		c.Image = s.GetImage().GetImage()
	}
	if c.Name == "" {
		c.Name = l[runtime.LabelContainerName]
	}
	if c.State == runtime.ContainerExited {
		c.FinishedAt = unixNano(s.GetFinishedAt())
	}
	return c
}

func unixNano(ns int64) time.Time {
	if ns <= 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

func containerState(s criv1.ContainerState) runtime.ContainerState {
	switch s {
	case criv1.ContainerState_CONTAINER_CREATED:
		return runtime.ContainerCreated
	case criv1.ContainerState_CONTAINER_RUNNING:
		return runtime.ContainerRunning
	case criv1.ContainerState_CONTAINER_EXITED:
		return runtime.ContainerExited
	}
	return runtime.ContainerUnknown
}

// ExecSync runs cmd in the container and waits up to timeout.
func (r *Runtime) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (*runtime.ExecResult, error) {
	resp, err := r.rt.ExecSync(ctx, &criv1.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: seconds(timeout)})
	if err != nil {
		if c := status.Code(err); c == codes.FailedPrecondition || c == codes.NotFound {
			return nil, fmt.Errorf("exec in %s: %w: %s", id, runtime.ErrNotRunning, status.Convert(err).Message())
		}
		return nil, wrap(err, "exec in "+id)
	}
	return &runtime.ExecResult{Stdout: resp.GetStdout(), Stderr: resp.GetStderr(), ExitCode: int(resp.GetExitCode())}, nil
}
