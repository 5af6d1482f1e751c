package server

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/typeurl/v2"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Labels on podline-cri's containerd containers: what kind of CRI object
// each is, and the state that changes after creation.
const (
	labelPrefix     = "io.podline.cri/"
	labelKind       = labelPrefix + "kind"
	labelSandboxID  = labelPrefix + "sandbox-id"
	labelNetNS      = labelPrefix + "netns"
	labelIPs        = labelPrefix + "ips"
	labelStopped    = labelPrefix + "stopped"
	labelStartedAt  = labelPrefix + "started-at"
	labelFinishedAt = labelPrefix + "finished-at"
	labelExitCode   = labelPrefix + "exit-code"
	labelReason     = labelPrefix + "reason"
	labelMessage    = labelPrefix + "message"
	labelImage      = labelPrefix + "image"
	labelImageID    = labelPrefix + "image-id"
	labelImageRef   = labelPrefix + "image-ref"
	labelLogPath    = labelPrefix + "log-path"

	kindSandbox   = "sandbox"
	kindContainer = "container"

	// extensionConfig holds the CRI config a sandbox or container was
	// created from (PodSandboxConfig or ContainerConfig, protobuf).
	extensionConfig = "io.podline.cri.config"
)

// Annotations containerd's runc shim reads: the sandbox ID groups a pod's
// tasks in one shim process.
const (
	annotationSandboxID     = "io.kubernetes.cri.sandbox-id"
	annotationContainerType = "io.kubernetes.cri.container-type"
	annotationSandboxName   = "io.kubernetes.cri.sandbox-name"
	annotationContainerName = "io.kubernetes.cri.container-name"

	containerTypeSandbox   = "sandbox"
	containerTypeContainer = "container"
)

func namespaced(ctx context.Context, ns string) context.Context {
	return namespaces.WithNamespace(ctx, ns)
}

// withConfig stores m as the container's config extension.
func withConfig(m proto.Message) containerd.NewContainerOpts {
	return func(ctx context.Context, _ *containerd.Client, c *containers.Container) error {
		a, err := typeurl.MarshalAny(m)
		if err != nil {
			return err
		}
		if c.Extensions == nil {
			c.Extensions = map[string]typeurl.Any{}
		}
		c.Extensions[extensionConfig] = a
		return nil
	}
}

func readConfig(rec containers.Container, into proto.Message) error {
	a, ok := rec.Extensions[extensionConfig]
	if !ok {
		return fmt.Errorf("container %s has no CRI config", rec.ID)
	}
	return proto.Unmarshal(a.GetValue(), into)
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// setLabels records state on a containerd container; a failure is logged
// (the in-memory store still has it until the next restart).
func (s *Service) setLabels(ctx context.Context, id string, labels map[string]string) {
	ctx = context.WithoutCancel(s.ctx(ctx))
	c, err := s.client.LoadContainer(ctx, id)
	if err == nil {
		_, err = c.SetLabels(ctx, labels)
	}
	if err != nil && !isNotFound(err) {
		s.log.Warn("record state in containerd", "id", id, "err", err)
	}
}

// recover rebuilds the store from containerd: sandboxes first, then
// containers, reattaching to the tasks that still run.
func (s *Service) recover(ctx context.Context) error {
	recs, err := s.client.ContainerService().List(ctx, fmt.Sprintf(`labels.%q`, labelKind))
	if err != nil {
		return err
	}
	var ctrs []containers.Container
	for _, rec := range recs {
		switch rec.Labels[labelKind] {
		case kindSandbox:
			if err := s.recoverSandbox(ctx, rec); err != nil {
				s.log.Warn("recover sandbox", "sandbox", rec.ID, "err", err)
			}
		case kindContainer:
			ctrs = append(ctrs, rec)
		}
	}
	for _, rec := range ctrs {
		if err := s.recoverContainer(ctx, rec); err != nil {
			s.log.Warn("recover container", "container", rec.ID, "err", err)
		}
	}
	s.log.Info("recovered from containerd", "sandboxes", len(s.store.sandboxes), "containers", len(s.store.containers))
	return nil
}

func (s *Service) recoverSandbox(ctx context.Context, rec containers.Container) error {
	cfg := &runtimeapi.PodSandboxConfig{}
	if err := readConfig(rec, cfg); err != nil {
		return err
	}
	l := rec.Labels
	sb := &sandbox{
		ID: rec.ID, Config: cfg, NetNS: l[labelNetNS], Dir: s.sandboxDir(rec.ID), CreatedAt: rec.CreatedAt,
		State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY,
	}
	if ips := l[labelIPs]; ips != "" {
		sb.IPs = strings.Split(ips, ",")
	}
	if l[labelStopped] != "true" {
		sb.networkReady = !sb.hostNetwork()
		c, err := s.client.LoadContainer(ctx, rec.ID)
		if err != nil {
			return err
		}
		if task, err := c.Task(ctx, nil); err == nil {
			if st, err := task.Status(ctx); err == nil && st.Status == containerd.Running {
				sb.State, sb.PID = runtimeapi.PodSandboxState_SANDBOX_READY, task.Pid()
				go s.waitSandbox(s.bg, sb, task)
			}
		}
	}
	s.store.addSandbox(sb)
	return nil
}

func (s *Service) recoverContainer(ctx context.Context, rec containers.Container) error {
	cfg := &runtimeapi.ContainerConfig{}
	if err := readConfig(rec, cfg); err != nil {
		return err
	}
	l := rec.Labels
	c := &container{
		ID: rec.ID, SandboxID: l[labelSandboxID], Config: cfg,
		Image: l[labelImage], ImageID: l[labelImageID], ImageRef: l[labelImageRef], LogPath: l[labelLogPath],
		CreatedAt: rec.CreatedAt, StartedAt: parseTime(l[labelStartedAt]), FinishedAt: parseTime(l[labelFinishedAt]),
		Reason: l[labelReason], Message: l[labelMessage],
		State:  runtimeapi.ContainerState_CONTAINER_CREATED,
		exited: make(chan struct{}),
	}
	if code, ok := l[labelExitCode]; ok {
		n, _ := strconv.Atoi(code)
		c.ExitCode, c.State = int32(n), runtimeapi.ContainerState_CONTAINER_EXITED
		close(c.exited)
		s.store.addContainer(c)
		return nil
	}
	s.store.addContainer(c)
	if c.StartedAt.IsZero() {
		return nil
	}
	// Started and no exit recorded: reattach to its task, or record that
	// it vanished.
	cc, err := s.client.LoadContainer(ctx, rec.ID)
	if err != nil {
		return err
	}
	cio, err := s.attachIO(c)
	if err != nil {
		return err
	}
	task, err := cc.Task(ctx, cio.attach())
	if err != nil {
		cio.Close()
		if t, terr := cc.Task(ctx, nil); terr == nil {
			// The task runs but its streams are lost: keep it, unlogged.
			s.log.Warn("reattach container streams", "container", c.ID, "err", err)
			task, cio = t, nil
		} else {
			s.recordExit(ctx, c, 255, time.Now(), "Unknown", "the container's task is gone")
			return nil
		}
	}
	c.io, c.task = cio, task
	c.State = runtimeapi.ContainerState_CONTAINER_RUNNING
	go s.waitContainer(s.bg, c, task)
	return nil
}
