package containerd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	tasks "github.com/containerd/containerd/api/services/tasks/v1"
	tasktypes "github.com/containerd/containerd/api/types/task"
	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/containerd/v2/pkg/oci"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"podline.dev/services/kubelet/internal/runtime"
)

// list returns the kubelet's containers of one kind (of one pod) and the
// state of every task, by container ID.
func (r *Runtime) list(ctx context.Context, kind, podUID string) ([]containers.Container, map[string]*tasktypes.Process, error) {
	filter := fmt.Sprintf(`labels.%q==%s`, runtime.LabelKind, kind)
	if podUID != "" {
		filter += fmt.Sprintf(`,labels.%q==%q`, runtime.LabelPodUID, podUID)
	}
	recs, err := r.client.ContainerService().List(ctx, filter)
	if err != nil {
		return nil, nil, fmt.Errorf("list containers: %w", err)
	}
	procs := make(map[string]*tasktypes.Process, len(recs))
	if podUID != "" {
		// One pod: ask for its few tasks only (listing every task asks
		// every shim on the node).
		for _, rec := range recs {
			resp, err := r.client.TaskService().Get(ctx, &tasks.GetRequest{ContainerID: rec.ID})
			if err != nil {
				if isNotFound(err) {
					continue
				}
				return nil, nil, fmt.Errorf("get task %s: %w", rec.ID, err)
			}
			procs[rec.ID] = resp.Process
		}
	} else {
		resp, err := r.client.TaskService().List(ctx, &tasks.ListTasksRequest{})
		if err != nil {
			return nil, nil, fmt.Errorf("list tasks: %w", err)
		}
		for _, p := range resp.Tasks {
			// A task's init process has the container's ID.
			id := p.ContainerID
			if id == "" {
				id = p.ID
			}
			procs[id] = p
		}
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].CreatedAt.Before(recs[j].CreatedAt) })
	return recs, procs, nil
}

// processState is what is known of a container's process.
type processState struct {
	State      runtime.ContainerState
	StartedAt  time.Time
	FinishedAt time.Time
	ExitCode   int
	Reason     string
	Message    string
}

// state reads a container's process state from its task or, once the task
// is gone, from the labels its exit was recorded in. A stopped task has its
// exit recorded and is deleted.
func (r *Runtime) state(ctx context.Context, rec containers.Container, p *tasktypes.Process) processState {
	l := rec.Labels
	st := processState{StartedAt: parseTime(l[runtime.LabelStartedAt])}
	if p != nil {
		switch p.Status {
		case tasktypes.Status_RUNNING, tasktypes.Status_PAUSED, tasktypes.Status_PAUSING:
			st.State = runtime.ContainerRunning
			return st
		case tasktypes.Status_CREATED:
			st.State = runtime.ContainerCreated
			return st
		case tasktypes.Status_STOPPED:
			exited := r.clock.Now()
			if p.ExitedAt != nil {
				exited = p.ExitedAt.AsTime()
			}
			st.State, st.ExitCode, st.FinishedAt = runtime.ContainerExited, int(p.ExitStatus), exited
			st.Reason = exitReason(st.ExitCode)
			r.recordExit(ctx, rec.ID, st)
			return st
		default:
			st.State = runtime.ContainerUnknown
			return st
		}
	}
	if code, ok := l[runtime.LabelExitCode]; ok {
		n, _ := strconv.Atoi(code)
		st.State, st.ExitCode = runtime.ContainerExited, n
		st.FinishedAt = parseTime(l[runtime.LabelFinishedAt])
		st.Reason = l[runtime.LabelReason]
		return st
	}
	if !st.StartedAt.IsZero() {
		// Started, and the task vanished without a recorded exit (the
		// node rebooted under it).
		st.State, st.ExitCode, st.Reason = runtime.ContainerExited, 255, "Unknown"
		return st
	}
	st.State = runtime.ContainerCreated
	return st
}

func exitReason(code int) string {
	if code == 0 {
		return "Completed"
	}
	return "Error"
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// recordExit writes a process's end on its container and deletes its task.
func (r *Runtime) recordExit(ctx context.Context, id string, st processState) {
	ctx = context.WithoutCancel(ctx)
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		return
	}
	labels := map[string]string{
		runtime.LabelExitCode:   strconv.Itoa(st.ExitCode),
		runtime.LabelFinishedAt: st.FinishedAt.Format(time.RFC3339Nano),
		runtime.LabelReason:     st.Reason,
	}
	if _, err := c.SetLabels(ctx, labels); err != nil {
		r.log.Warn("record container exit", "container", id, "err", err)
		return
	}
	if _, err := r.client.TaskService().Delete(ctx, &tasks.DeleteTaskRequest{ContainerID: id}); err != nil && !isNotFound(err) {
		r.log.Warn("delete exited task", "container", id, "err", err)
	}
}

// ListContainers lists the kubelet's containers with their state.
func (r *Runtime) ListContainers(ctx context.Context, podUID string) ([]*runtime.Container, error) {
	recs, procs, err := r.list(ctx, runtime.KindContainer, podUID)
	if err != nil {
		return nil, err
	}
	out := make([]*runtime.Container, 0, len(recs))
	for _, rec := range recs {
		l := rec.Labels
		st := r.state(ctx, rec, procs[rec.ID])
		out = append(out, &runtime.Container{
			ID:         rec.ID,
			SandboxID:  l[runtime.LabelSandboxID],
			Pod:        podRef(l),
			Name:       l[runtime.LabelContainerName],
			Attempt:    atoi(l[runtime.LabelAttempt]),
			Init:       l[runtime.LabelInit] == "true",
			Hash:       l[runtime.LabelContainerHash],
			Image:      l[runtime.LabelImage],
			ImageID:    imageIDLabel(l),
			State:      st.State,
			CreatedAt:  rec.CreatedAt,
			StartedAt:  st.StartedAt,
			FinishedAt: st.FinishedAt,
			ExitCode:   st.ExitCode,
			Reason:     st.Reason,
			Message:    l[labelMessage],
			LogPath:    l[runtime.LabelLogPath],
		})
	}
	return out, nil
}

const (
	labelImageID = "podline.dev/image-id"
	labelMessage = "podline.dev/message"
)

func imageIDLabel(l map[string]string) string { return l[labelImageID] }

// CreateContainer creates a container in the sandbox's namespaces.
func (r *Runtime) CreateContainer(ctx context.Context, sb *runtime.Sandbox, cfg *runtime.ContainerConfig) (string, error) {
	img, err := r.client.GetImage(ctx, normalize(cfg.Image))
	if err != nil {
		if isNotFound(err) {
			return "", fmt.Errorf("image %s: %w", cfg.Image, runtime.ErrImageNotPresent)
		}
		return "", err
	}
	if ok, err := img.IsUnpacked(ctx, r.snapshotter); err == nil && !ok {
		if err := img.Unpack(ctx, r.snapshotter); err != nil {
			return "", fmt.Errorf("unpack %s: %w", cfg.Image, err)
		}
	}
	imgSpec, err := img.Spec(ctx)
	if err != nil {
		return "", fmt.Errorf("image config %s: %w", cfg.Image, err)
	}
	pause, err := r.client.LoadContainer(ctx, sb.ID)
	if err != nil {
		return "", notFound(err, "sandbox "+sb.ID)
	}
	pauseTask, err := pause.Task(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("sandbox %s is not running: %w", sb.ID, err)
	}
	pid := pauseTask.Pid()
	id := newID()

	specOpts := []oci.SpecOpts{
		oci.WithImageConfig(img),
		withArgs(imgSpec.Config.Entrypoint, imgSpec.Config.Cmd, cfg.Command, cfg.Args),
		oci.WithEnv(cfg.Env),
		oci.WithCgroup(r.cgroupPath(sb.Pod.UID, id)),
		oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.IPCNamespace, Path: fmt.Sprintf("/proc/%d/ns/ipc", pid)}),
		oci.WithAnnotations(podAnnotations(sb.ID, containerTypeContainer)),
	}
	if sb.HostNetwork {
		specOpts = append(specOpts, oci.WithHostNamespace(specs.NetworkNamespace), oci.WithHostNamespace(specs.UTSNamespace))
	} else {
		specOpts = append(specOpts,
			oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.NetworkNamespace, Path: sb.NetNSPath}),
			oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.UTSNamespace, Path: fmt.Sprintf("/proc/%d/ns/uts", pid)}),
		)
	}
	if cfg.WorkingDir != "" {
		specOpts = append(specOpts, oci.WithProcessCwd(cfg.WorkingDir))
	}
	if len(cfg.Mounts) > 0 {
		specOpts = append(specOpts, withBindMounts(cfg.Mounts))
	}
	if res := cfg.Resources; res.CPUShares > 0 {
		specOpts = append(specOpts, oci.WithCPUShares(res.CPUShares))
	}
	if res := cfg.Resources; res.CPUQuota > 0 {
		specOpts = append(specOpts, oci.WithCPUCFS(res.CPUQuota, res.CPUPeriod))
	}
	if res := cfg.Resources; res.MemoryLimit > 0 {
		specOpts = append(specOpts, oci.WithMemoryLimit(uint64(res.MemoryLimit)))
	}
	if cfg.TTY {
		specOpts = append(specOpts, oci.WithTTY)
	}
	labels := map[string]string{
		runtime.LabelKind:          runtime.KindContainer,
		runtime.LabelSandboxID:     sb.ID,
		runtime.LabelPodUID:        sb.Pod.UID,
		runtime.LabelPodName:       sb.Pod.Name,
		runtime.LabelPodNamespace:  sb.Pod.Namespace,
		runtime.LabelContainerName: cfg.Name,
		runtime.LabelAttempt:       strconv.Itoa(cfg.Attempt),
		runtime.LabelContainerHash: cfg.Hash,
		runtime.LabelInit:          strconv.FormatBool(cfg.Init),
		runtime.LabelLogPath:       cfg.LogPath,
		runtime.LabelImage:         cfg.Image,
		labelImageID:               imageID(img.Name(), img.Target().Digest.String()),
	}
	if _, err := r.client.NewContainer(ctx, id,
		containerd.WithImage(img),
		containerd.WithSnapshotter(r.snapshotter),
		containerd.WithNewSnapshot(id, img),
		containerd.WithNewSpec(specOpts...),
		containerd.WithContainerLabels(labels),
	); err != nil {
		return "", fmt.Errorf("create container %s: %w", cfg.Name, err)
	}
	return id, nil
}

// withArgs applies Kubernetes' rule: command replaces the entrypoint and
// drops the image's cmd; args replace the cmd.
func withArgs(entrypoint, cmd, command, args []string) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		if len(command) == 0 && len(args) == 0 {
			return nil
		}
		var argv []string
		if len(command) > 0 {
			argv = append(append(argv, command...), args...)
		} else {
			argv = append(append(argv, entrypoint...), args...)
		}
		if len(argv) == 0 {
			argv = cmd
		}
		if s.Process == nil {
			s.Process = &specs.Process{}
		}
		s.Process.Args = argv
		return nil
	}
}

func withBindMounts(mounts []runtime.Mount) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		for _, m := range mounts {
			opts := []string{"rbind", "rprivate", "rw"}
			if m.ReadOnly {
				opts[2] = "ro"
			}
			// A mount replaces any default at the same place (/etc/hosts).
			kept := s.Mounts[:0]
			for _, existing := range s.Mounts {
				if existing.Destination != m.ContainerPath {
					kept = append(kept, existing)
				}
			}
			s.Mounts = append(kept, specs.Mount{Destination: m.ContainerPath, Type: "bind", Source: m.HostPath, Options: opts})
		}
		return nil
	}
}

// StartContainer starts the container's process with its output going to
// its log file.
func (r *Runtime) StartContainer(ctx context.Context, id string) error {
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		return notFound(err, "container "+id)
	}
	labels, err := c.Labels(ctx)
	if err != nil {
		return err
	}
	creator := cio.NullIO
	if p := labels[runtime.LabelLogPath]; p != "" {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		creator = cio.LogFile(p)
	}
	fail := func(err error) error {
		now := r.clock.Now()
		_, _ = c.SetLabels(context.WithoutCancel(ctx), map[string]string{
			runtime.LabelExitCode:   "128",
			runtime.LabelStartedAt:  now.Format(time.RFC3339Nano),
			runtime.LabelFinishedAt: now.Format(time.RFC3339Nano),
			runtime.LabelReason:     "StartError",
			labelMessage:            truncate(err.Error(), 1024),
		})
		return err
	}
	task, err := c.NewTask(ctx, creator)
	if err != nil {
		return fail(fmt.Errorf("create task: %w", err))
	}
	if err := task.Start(ctx); err != nil {
		_, _ = task.Delete(context.WithoutCancel(ctx), containerd.WithProcessKill)
		return fail(fmt.Errorf("start task: %w", err))
	}
	_, err = c.SetLabels(ctx, map[string]string{runtime.LabelStartedAt: r.clock.Now().Format(time.RFC3339Nano)})
	return err
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// StopContainer stops a container's process: SIGTERM, then SIGKILL.
func (r *Runtime) StopContainer(ctx context.Context, id string, timeout time.Duration) error {
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return err
	}
	return r.stop(ctx, c, timeout)
}

func (r *Runtime) stop(ctx context.Context, c containerd.Container, timeout time.Duration) error {
	task, err := c.Task(ctx, nil)
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return err
	}
	exitCh, err := task.Wait(ctx)
	if err != nil {
		return fmt.Errorf("wait for %s: %w", c.ID(), err)
	}
	status, err := task.Status(ctx)
	if err == nil && status.Status != containerd.Stopped {
		if timeout > 0 {
			if err := task.Kill(ctx, syscall.SIGTERM); err != nil && !isNotFound(err) {
				return fmt.Errorf("signal %s: %w", c.ID(), err)
			}
			timer := time.NewTimer(timeout)
			select {
			case <-exitCh:
				timer.Stop()
				return r.reap(ctx, c.ID())
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				return ctx.Err()
			}
		}
		if err := task.Kill(ctx, syscall.SIGKILL, containerd.WithKillAll); err != nil && !isNotFound(err) {
			return fmt.Errorf("kill %s: %w", c.ID(), err)
		}
		select {
		case <-exitCh:
		case <-time.After(30 * time.Second):
			return fmt.Errorf("%s did not exit after SIGKILL", c.ID())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return r.reap(ctx, c.ID())
}

// reap records the exit of a stopped task and deletes it.
func (r *Runtime) reap(ctx context.Context, id string) error {
	resp, err := r.client.TaskService().Get(ctx, &tasks.GetRequest{ContainerID: id})
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return err
	}
	p := resp.Process
	st := processState{State: runtime.ContainerExited, ExitCode: int(p.ExitStatus), FinishedAt: r.clock.Now()}
	if p.ExitedAt != nil {
		st.FinishedAt = p.ExitedAt.AsTime()
	}
	st.Reason = exitReason(st.ExitCode)
	r.recordExit(ctx, id, st)
	return nil
}

// RemoveContainer kills what still runs and deletes the container and its
// snapshot.
func (r *Runtime) RemoveContainer(ctx context.Context, id string) error {
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return err
	}
	return r.remove(ctx, c)
}

func (r *Runtime) remove(ctx context.Context, c containerd.Container) error {
	if err := r.stop(ctx, c, 0); err != nil {
		return err
	}
	if err := c.Delete(ctx, containerd.WithSnapshotCleanup); err != nil && !isNotFound(err) {
		return fmt.Errorf("delete %s: %w", c.ID(), err)
	}
	return nil
}
