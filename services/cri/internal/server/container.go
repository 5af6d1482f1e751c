package server

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/typeurl/v2"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"podline.dev/services/cri/internal/filter"
)

// Exit of a container whose start failed, as containerd's CRI reports it.
const (
	startErrorExitCode = 128
	reasonStartError   = "StartError"
	reasonCompleted    = "Completed"
	reasonError        = "Error"
	reasonOOMKilled    = "OOMKilled"
)

// CreateContainer creates a container in a ready sandbox.
func (s *Service) CreateContainer(ctx context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	id, err := s.createContainer(s.ctx(ctx), req.GetPodSandboxId(), req.GetConfig())
	if err != nil {
		return nil, toGRPC(err)
	}
	return &runtimeapi.CreateContainerResponse{ContainerId: id}, nil
}

func (s *Service) createContainer(ctx context.Context, sandboxID string, cfg *runtimeapi.ContainerConfig) (_ string, err error) {
	sb, err := s.store.sandbox(sandboxID)
	if err != nil {
		return "", err
	}
	var ready bool
	s.store.read(func() { ready = sb.State == runtimeapi.PodSandboxState_SANDBOX_READY && sb.PID != 0 })
	if !ready {
		return "", fmt.Errorf("sandbox %s is not ready: %w", sb.ID, ErrNotRunning)
	}
	if cfg.GetMetadata().GetName() == "" {
		return "", fmt.Errorf("container metadata needs a name: %w", ErrInvalid)
	}
	img, err := s.localImage(ctx, cfg.GetImage().GetImage())
	if err != nil {
		return "", err
	}
	if ok, err := img.IsUnpacked(ctx, s.snapshotter); err == nil && !ok {
		if err := img.Unpack(ctx, s.snapshotter); err != nil {
			return "", fmt.Errorf("unpack %s: %w", img.Name(), err)
		}
	}
	imgSpec, err := img.Spec(ctx)
	if err != nil {
		return "", fmt.Errorf("image config %s: %w", img.Name(), err)
	}
	id := newID()
	name := containerName(cfg.GetMetadata(), sb.Config.GetMetadata())
	if err := s.store.reserve(name, id); err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			s.store.release(name)
		}
	}()
	specOpts, err := s.containerSpec(sb, id, cfg, img, imgSpec.Config)
	if err != nil {
		return "", err
	}
	c := &container{
		ID: id, SandboxID: sb.ID, Config: cfg,
		Image: img.Name(), ImageRef: imageRef(img.Name(), img.Target().Digest.String()),
		State:  runtimeapi.ContainerState_CONTAINER_CREATED,
		exited: make(chan struct{}),
	}
	if cd, err := img.Config(ctx); err == nil {
		c.ImageID = cd.Digest.String()
	}
	if dir, p := sb.Config.GetLogDirectory(), cfg.GetLogPath(); dir != "" && p != "" {
		c.LogPath = filepath.Join(dir, p)
	}
	labels := map[string]string{
		labelKind: kindContainer, labelSandboxID: sb.ID, labelImage: c.Image, labelImageID: c.ImageID,
		labelImageRef: c.ImageRef, labelLogPath: c.LogPath,
	}
	rec, err := s.client.NewContainer(ctx, id,
		containerd.WithImage(img),
		containerd.WithSnapshotter(s.snapshotter),
		containerd.WithNewSnapshot(id, img),
		containerd.WithNewSpec(specOpts...),
		containerd.WithContainerLabels(labels),
		withConfig(cfg),
	)
	if err != nil {
		return "", fmt.Errorf("create container %s: %w", cfg.GetMetadata().GetName(), err)
	}
	if info, err := rec.Info(ctx); err == nil {
		c.CreatedAt = info.CreatedAt
	} else {
		c.CreatedAt = time.Now()
	}
	s.store.addContainer(c)
	return id, nil
}

// StartContainer starts the container's process with its output going to
// its log file.
func (s *Service) StartContainer(ctx context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	c, err := s.store.container(req.GetContainerId())
	if err != nil {
		return nil, toGRPC(err)
	}
	if err := s.startContainer(s.ctx(ctx), c); err != nil {
		return nil, toGRPC(err)
	}
	return &runtimeapi.StartContainerResponse{}, nil
}

func (s *Service) startContainer(ctx context.Context, c *container) error {
	var state runtimeapi.ContainerState
	s.store.read(func() { state = c.State })
	if state != runtimeapi.ContainerState_CONTAINER_CREATED {
		return fmt.Errorf("container %s is %s, not created: %w", c.ID, state, ErrInvalid)
	}
	sb, err := s.store.sandbox(c.SandboxID)
	if err != nil {
		return err
	}
	var ready bool
	s.store.read(func() { ready = sb.State == runtimeapi.PodSandboxState_SANDBOX_READY })
	if !ready {
		return fmt.Errorf("sandbox %s is not ready: %w", sb.ID, ErrNotRunning)
	}
	cc, err := s.client.LoadContainer(ctx, c.ID)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		s.recordExit(ctx, c, startErrorExitCode, time.Now(), reasonStartError, truncate(err.Error(), 1024))
		return err
	}
	cio, err := s.newContainerIO(c)
	if err != nil {
		return fail(err)
	}
	task, err := cc.NewTask(ctx, cio.creator())
	if err != nil {
		cio.Close()
		return fail(fmt.Errorf("create task: %w", err))
	}
	if err := task.Start(ctx); err != nil {
		_, _ = task.Delete(context.WithoutCancel(ctx), containerd.WithProcessKill)
		cio.Close()
		return fail(fmt.Errorf("start task: %w", err))
	}
	now := time.Now()
	s.store.update(func() {
		c.io, c.task, c.StartedAt, c.State = cio, task, now, runtimeapi.ContainerState_CONTAINER_RUNNING
	})
	s.setLabels(ctx, c.ID, map[string]string{labelStartedAt: formatTime(now)})
	go s.waitContainer(s.bg, c, task)
	return nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// waitContainer records the container's exit and deletes its task.
func (s *Service) waitContainer(ctx context.Context, c *container, task containerd.Task) {
	st := s.waitTask(ctx, task)
	if st == nil {
		return
	}
	code, exitedAt := int32(st.ExitCode()), st.ExitTime()
	reason := reasonCompleted
	if code != 0 {
		reason = reasonError
	}
	if s.oomKilled(ctx, task) {
		reason = reasonOOMKilled
	}
	if _, err := task.Delete(ctx); err != nil && !isNotFound(err) {
		s.log.Warn("delete exited task", "container", c.ID, "err", err)
	}
	s.recordExit(ctx, c, code, exitedAt, reason, "")
}

// oomKilled reads whether the kernel's OOM killer ended the task.
func (s *Service) oomKilled(ctx context.Context, task containerd.Task) bool {
	m, err := task.Metrics(ctx)
	if err != nil {
		return false
	}
	return oomKillsFromMetrics(m.Data) > 0
}

// recordExit records an exit in the store and on the containerd container.
func (s *Service) recordExit(ctx context.Context, c *container, code int32, at time.Time, reason, message string) {
	if at.IsZero() {
		at = time.Now()
	}
	var cio *containerIO
	s.store.update(func() {
		c.State, c.ExitCode, c.FinishedAt, c.Reason, c.Message = runtimeapi.ContainerState_CONTAINER_EXITED, code, at, reason, message
		if c.StartedAt.IsZero() {
			c.StartedAt = at
		}
		cio, c.io, c.task = c.io, nil, nil
	})
	if cio != nil {
		cio.Close()
	}
	s.setLabels(ctx, c.ID, map[string]string{
		labelExitCode: strconv.Itoa(int(code)), labelFinishedAt: formatTime(at), labelReason: reason,
		labelMessage: message, labelStartedAt: formatTime(c.StartedAt),
	})
	select {
	case <-c.exited:
	default:
		close(c.exited)
	}
}

// StopContainer sends SIGTERM and, after the timeout, SIGKILL.
func (s *Service) StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	c, err := s.store.container(req.GetContainerId())
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return &runtimeapi.StopContainerResponse{}, nil // stopping is idempotent
		}
		return nil, toGRPC(err)
	}
	if err := s.stopContainer(s.ctx(ctx), c, time.Duration(req.GetTimeout())*time.Second); err != nil {
		return nil, toGRPC(err)
	}
	return &runtimeapi.StopContainerResponse{}, nil
}

func (s *Service) stopContainer(ctx context.Context, c *container, timeout time.Duration) error {
	var state runtimeapi.ContainerState
	s.store.read(func() { state = c.State })
	if state != runtimeapi.ContainerState_CONTAINER_RUNNING && state != runtimeapi.ContainerState_CONTAINER_UNKNOWN {
		return nil
	}
	if err := s.killTask(ctx, c.ID, timeout); err != nil {
		return err
	}
	// The exit is recorded by waitContainer; wait for it so a status read
	// next sees the container exited.
	select {
	case <-c.exited:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("container %s stopped but its exit was not recorded", c.ID)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RemoveContainer kills what still runs and deletes the container.
func (s *Service) RemoveContainer(ctx context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	c, err := s.store.container(req.GetContainerId())
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return &runtimeapi.RemoveContainerResponse{}, nil
		}
		return nil, toGRPC(err)
	}
	if err := s.removeContainer(s.ctx(ctx), c); err != nil {
		return nil, toGRPC(err)
	}
	return &runtimeapi.RemoveContainerResponse{}, nil
}

func (s *Service) removeContainer(ctx context.Context, c *container) error {
	if err := s.stopContainer(ctx, c, 0); err != nil {
		return err
	}
	if err := s.deleteContainerd(ctx, c.ID); err != nil {
		return err
	}
	s.store.deleteContainer(c.ID)
	return nil
}

// ContainerStatus reports a container's state, exit and log path.
func (s *Service) ContainerStatus(ctx context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	c, err := s.store.container(req.GetContainerId())
	if err != nil {
		return nil, toGRPC(err)
	}
	var st *runtimeapi.ContainerStatus
	s.store.read(func() {
		st = &runtimeapi.ContainerStatus{
			Id: c.ID, Metadata: c.Config.GetMetadata(), State: c.State,
			CreatedAt: c.CreatedAt.UnixNano(), StartedAt: unixNano(c.StartedAt), FinishedAt: unixNano(c.FinishedAt),
			ExitCode: c.ExitCode, Image: &runtimeapi.ImageSpec{Image: c.Config.GetImage().GetImage()},
			ImageRef: c.ImageRef, ImageId: c.ImageID, Reason: c.Reason, Message: c.Message,
			Labels: c.Config.GetLabels(), Annotations: c.Config.GetAnnotations(),
			Mounts: c.Config.GetMounts(), LogPath: c.LogPath,
			Resources: &runtimeapi.ContainerResources{Linux: c.Config.GetLinux().GetResources()},
		}
	})
	resp := &runtimeapi.ContainerStatusResponse{Status: st}
	if req.GetVerbose() {
		resp.Info = map[string]string{"info": fmt.Sprintf(`{"sandboxID":%q,"image":%q}`, c.SandboxID, c.Image)}
	}
	return resp, nil
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func (s *Service) listContainers() []*runtimeapi.Container {
	var all []*runtimeapi.Container
	cs := s.store.listContainers("")
	s.store.read(func() {
		for _, c := range cs {
			all = append(all, &runtimeapi.Container{
				Id: c.ID, PodSandboxId: c.SandboxID, Metadata: c.Config.GetMetadata(),
				Image: &runtimeapi.ImageSpec{Image: c.Config.GetImage().GetImage()}, ImageRef: c.ImageRef, ImageId: c.ImageID,
				State: c.State, CreatedAt: c.CreatedAt.UnixNano(),
				Labels: c.Config.GetLabels(), Annotations: c.Config.GetAnnotations(),
			})
		}
	})
	return all
}

// ListContainers lists the containers the filter selects.
func (s *Service) ListContainers(ctx context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	return &runtimeapi.ListContainersResponse{Containers: filter.Containers(s.listContainers(), req.GetFilter())}, nil
}

// UpdateContainerResources changes a container's cgroup limits, in its
// spec and, while it runs, on its task.
func (s *Service) UpdateContainerResources(ctx context.Context, req *runtimeapi.UpdateContainerResourcesRequest) (*runtimeapi.UpdateContainerResourcesResponse, error) {
	c, err := s.store.container(req.GetContainerId())
	if err != nil {
		return nil, toGRPC(err)
	}
	ctx = s.ctx(ctx)
	res := req.GetLinux()
	if res == nil {
		return &runtimeapi.UpdateContainerResourcesResponse{}, nil
	}
	cc, err := s.client.LoadContainer(ctx, c.ID)
	if err != nil {
		return nil, toGRPC(err)
	}
	spec, err := cc.Spec(ctx)
	if err != nil {
		return nil, toGRPC(err)
	}
	if spec.Linux == nil {
		spec.Linux = &specs.Linux{}
	}
	spec.Linux.Resources = linuxResources(spec.Linux.Resources, res)
	if err := cc.Update(ctx, withSpec(spec)); err != nil {
		return nil, toGRPC(err)
	}
	if task, err := cc.Task(ctx, nil); err == nil {
		if err := task.Update(ctx, containerd.WithResources(spec.Linux.Resources)); err != nil && !isNotFound(err) {
			return nil, toGRPC(fmt.Errorf("update running container: %w", err))
		}
	}
	s.store.update(func() {
		cfg := proto.Clone(c.Config).(*runtimeapi.ContainerConfig)
		if cfg.Linux == nil {
			cfg.Linux = &runtimeapi.LinuxContainerConfig{}
		}
		cfg.Linux.Resources = res
		c.Config = cfg
	})
	return &runtimeapi.UpdateContainerResourcesResponse{}, nil
}

func withSpec(spec *specs.Spec) containerd.UpdateContainerOpts {
	return func(_ context.Context, _ *containerd.Client, c *containers.Container) error {
		a, err := typeurl.MarshalAny(spec)
		if err != nil {
			return err
		}
		c.Spec = a
		return nil
	}
}

// ReopenContainerLog reopens a running container's log file.
func (s *Service) ReopenContainerLog(ctx context.Context, req *runtimeapi.ReopenContainerLogRequest) (*runtimeapi.ReopenContainerLogResponse, error) {
	c, err := s.store.container(req.GetContainerId())
	if err != nil {
		return nil, toGRPC(err)
	}
	var cio *containerIO
	s.store.read(func() { cio = c.io })
	if cio == nil {
		return nil, toGRPC(fmt.Errorf("container %s: %w", c.ID, ErrNotRunning))
	}
	if err := cio.Reopen(); err != nil {
		return nil, toGRPC(err)
	}
	return &runtimeapi.ReopenContainerLogResponse{}, nil
}
