package containerd

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/containerd/v2/pkg/netns"
	"github.com/containerd/containerd/v2/pkg/oci"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"podline.dev/services/kubelet/internal/runtime"
)

// RunPodSandbox pins a new network namespace and starts the pause
// container in it.
func (r *Runtime) RunPodSandbox(ctx context.Context, cfg *runtime.SandboxConfig) (_ *runtime.Sandbox, err error) {
	img, err := r.ensureImage(ctx, r.sandboxImage)
	if err != nil {
		return nil, fmt.Errorf("sandbox image %s: %w", r.sandboxImage, err)
	}
	id := newID()
	var nsPath string
	if !cfg.HostNetwork {
		ns, err := netns.NewNetNS(r.netnsDir)
		if err != nil {
			return nil, fmt.Errorf("create network namespace: %w", err)
		}
		nsPath = ns.GetPath()
		defer func() {
			if err != nil {
				_ = ns.Remove()
			}
		}()
	}
	labels := map[string]string{
		runtime.LabelKind:          runtime.KindSandbox,
		runtime.LabelPodUID:        cfg.Pod.UID,
		runtime.LabelPodName:       cfg.Pod.Name,
		runtime.LabelPodNamespace:  cfg.Pod.Namespace,
		runtime.LabelContainerName: "POD",
		runtime.LabelAttempt:       strconv.Itoa(cfg.Attempt),
		runtime.LabelNetNS:         nsPath,
		runtime.LabelHostNetwork:   strconv.FormatBool(cfg.HostNetwork),
	}
	specOpts := []oci.SpecOpts{
		oci.WithImageConfig(img),
		oci.WithCgroup(r.cgroupPath(cfg.Pod.UID, id)),
		oci.WithCPUShares(2),
		oci.WithAnnotations(podAnnotations(id, containerTypeSandbox)),
	}
	if cfg.HostNetwork {
		specOpts = append(specOpts,
			oci.WithHostNamespace(specs.NetworkNamespace),
			oci.WithHostNamespace(specs.UTSNamespace),
		)
	} else {
		specOpts = append(specOpts,
			oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.NetworkNamespace, Path: nsPath}),
			oci.WithHostname(cfg.Hostname),
		)
	}
	c, err := r.client.NewContainer(ctx, id,
		containerd.WithImage(img),
		containerd.WithSnapshotter(r.snapshotter),
		containerd.WithNewSnapshot(id, img),
		containerd.WithNewSpec(specOpts...),
		containerd.WithContainerLabels(labels),
	)
	if err != nil {
		return nil, fmt.Errorf("create sandbox container: %w", err)
	}
	defer func() {
		if err != nil {
			_ = c.Delete(context.WithoutCancel(ctx), containerd.WithSnapshotCleanup)
		}
	}()
	task, err := c.NewTask(ctx, cio.NullIO)
	if err != nil {
		return nil, fmt.Errorf("create sandbox task: %w", err)
	}
	if err := task.Start(ctx); err != nil {
		_, _ = task.Delete(context.WithoutCancel(ctx), containerd.WithProcessKill)
		return nil, fmt.Errorf("start sandbox task: %w", err)
	}
	now := r.clock.Now()
	if _, err := c.SetLabels(ctx, map[string]string{runtime.LabelStartedAt: now.Format(time.RFC3339Nano)}); err != nil {
		return nil, err
	}
	return &runtime.Sandbox{
		ID: id, Pod: cfg.Pod, State: runtime.SandboxReady, CreatedAt: now, Attempt: cfg.Attempt,
		HostNetwork: cfg.HostNetwork, NetNSPath: nsPath,
	}, nil
}

// cgroupPath puts each container under the pod's cgroup.
func (r *Runtime) cgroupPath(podUID, id string) string {
	return strings.TrimSuffix(r.cgroupParent, "/") + "/pod" + podUID + "/" + id
}

// SetSandboxIPs records the pod's IPs on the sandbox.
func (r *Runtime) SetSandboxIPs(ctx context.Context, id string, ips []string) error {
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		return notFound(err, "sandbox "+id)
	}
	_, err = c.SetLabels(ctx, map[string]string{runtime.LabelPodIPs: strings.Join(ips, ",")})
	return err
}

// StopPodSandbox stops the pause container and removes the namespace.
func (r *Runtime) StopPodSandbox(ctx context.Context, id string) error {
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return err
	}
	if err := r.stop(ctx, c, 2*time.Second); err != nil {
		return err
	}
	labels, err := c.Labels(ctx)
	if err != nil {
		return err
	}
	if p := labels[runtime.LabelNetNS]; p != "" {
		if err := netns.LoadNetNS(p).Remove(); err != nil {
			return fmt.Errorf("remove network namespace %s: %w", p, err)
		}
	}
	return nil
}

// RemovePodSandbox deletes the pause container.
func (r *Runtime) RemovePodSandbox(ctx context.Context, id string) error {
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return err
	}
	labels, _ := c.Labels(ctx)
	if err := r.remove(ctx, c); err != nil {
		return err
	}
	if p := labels[runtime.LabelNetNS]; p != "" {
		_ = netns.LoadNetNS(p).Remove()
	}
	return nil
}

// ListPodSandboxes lists sandboxes with the state of their pause task.
func (r *Runtime) ListPodSandboxes(ctx context.Context, podUID string) ([]*runtime.Sandbox, error) {
	recs, procs, err := r.list(ctx, runtime.KindSandbox, podUID)
	if err != nil {
		return nil, err
	}
	out := make([]*runtime.Sandbox, 0, len(recs))
	for _, rec := range recs {
		l := rec.Labels
		sb := &runtime.Sandbox{
			ID:          rec.ID,
			Pod:         podRef(l),
			State:       runtime.SandboxNotReady,
			CreatedAt:   rec.CreatedAt,
			Attempt:     atoi(l[runtime.LabelAttempt]),
			HostNetwork: l[runtime.LabelHostNetwork] == "true",
			NetNSPath:   l[runtime.LabelNetNS],
		}
		if ips := l[runtime.LabelPodIPs]; ips != "" {
			sb.IPs = strings.Split(ips, ",")
		}
		if st := r.state(ctx, rec, procs[rec.ID]); st.State == runtime.ContainerRunning {
			sb.State = runtime.SandboxReady
		}
		out = append(out, sb)
	}
	return out, nil
}

func podRef(l map[string]string) runtime.PodRef {
	return runtime.PodRef{UID: l[runtime.LabelPodUID], Name: l[runtime.LabelPodName], Namespace: l[runtime.LabelPodNamespace]}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
