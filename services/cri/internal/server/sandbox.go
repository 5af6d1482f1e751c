package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/netns"
	"github.com/containerd/containerd/v2/pkg/oci"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"podline.dev/services/cri/internal/cni"
	"podline.dev/services/cri/internal/filter"
	"podline.dev/services/cri/internal/sandboxfiles"
)

// RunPodSandbox pins a network namespace, attaches it to the pod network
// (CNI ADD), writes the sandbox's resolv.conf, hosts and hostname, and
// starts the pause container in it.
func (s *Service) RunPodSandbox(ctx context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	id, err := s.runPodSandbox(s.ctx(ctx), req.GetConfig())
	if err != nil {
		return nil, toGRPC(err)
	}
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: id}, nil
}

func (s *Service) runPodSandbox(ctx context.Context, cfg *runtimeapi.PodSandboxConfig) (_ string, err error) {
	meta := cfg.GetMetadata()
	if meta.GetName() == "" || meta.GetNamespace() == "" || meta.GetUid() == "" {
		return "", fmt.Errorf("sandbox metadata needs name, namespace and uid: %w", ErrInvalid)
	}
	id := newID()
	name := sandboxName(meta)
	if err := s.store.reserve(name, id); err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			s.store.release(name)
		}
	}()
	img, err := s.ensureImage(ctx, s.sandboxImage)
	if err != nil {
		return "", fmt.Errorf("sandbox image %s: %w", s.sandboxImage, err)
	}
	sb := &sandbox{ID: id, Config: cfg, Dir: s.sandboxDir(id), State: runtimeapi.PodSandboxState_SANDBOX_READY}
	if err := os.MkdirAll(sb.Dir, 0o755); err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(sb.Dir)
		}
	}()
	if !sb.hostNetwork() {
		ns, err := netns.NewNetNS(s.netnsDir)
		if err != nil {
			return "", fmt.Errorf("create network namespace: %w", err)
		}
		sb.NetNS = ns.GetPath()
		defer func() {
			if err != nil {
				_ = ns.Remove()
			}
		}()
		ips, err := s.cniAdd(ctx, sb)
		if err != nil {
			return "", err
		}
		sb.IPs, sb.networkReady = ips, true
		defer func() {
			if err != nil {
				_ = s.cniDel(context.WithoutCancel(ctx), sb)
			}
		}()
	}
	if err := s.writeSandboxFiles(sb); err != nil {
		return "", err
	}

	specOpts := []oci.SpecOpts{
		oci.WithImageConfig(img),
		oci.WithCgroup(path.Join(s.podCgroupParent(cfg), id)),
		oci.WithCPUShares(2),
		oci.WithAnnotations(map[string]string{
			annotationSandboxID: id, annotationContainerType: containerTypeSandbox, annotationSandboxName: name,
		}),
		oci.WithAnnotations(cfg.GetAnnotations()),
		withSandboxNamespaces(sb),
		withSysctls(s.sandboxSysctls(sb)),
		oci.WithNoNewPrivileges,
	}
	if !sb.hostNetwork() {
		specOpts = append(specOpts, oci.WithHostname(cfg.GetHostname()))
	}
	if sc := cfg.GetLinux().GetSecurityContext(); sc != nil {
		if sc.GetRunAsUser() != nil {
			specOpts = append(specOpts, oci.WithUserID(uint32(sc.GetRunAsUser().GetValue())))
		}
		if sc.GetReadonlyRootfs() {
			specOpts = append(specOpts, oci.WithRootFSReadonly())
		}
	}
	labels := map[string]string{labelKind: kindSandbox, labelNetNS: sb.NetNS, labelIPs: strings.Join(sb.IPs, ",")}
	c, err := s.client.NewContainer(ctx, id,
		containerd.WithImage(img),
		containerd.WithSnapshotter(s.snapshotter),
		containerd.WithNewSnapshot(id, img),
		containerd.WithNewSpec(specOpts...),
		containerd.WithContainerLabels(labels),
		withConfig(cfg),
	)
	if err != nil {
		return "", fmt.Errorf("create sandbox container: %w", err)
	}
	defer func() {
		if err != nil {
			_ = c.Delete(context.WithoutCancel(ctx), containerd.WithSnapshotCleanup)
		}
	}()
	task, err := c.NewTask(ctx, nullIO)
	if err != nil {
		return "", fmt.Errorf("create sandbox task: %w", err)
	}
	if err := task.Start(ctx); err != nil {
		_, _ = task.Delete(context.WithoutCancel(ctx), containerd.WithProcessKill)
		return "", fmt.Errorf("start sandbox task: %w", err)
	}
	info, err := c.Info(ctx)
	if err == nil {
		sb.CreatedAt = info.CreatedAt
	} else {
		sb.CreatedAt = time.Now()
	}
	sb.PID = task.Pid()
	s.store.addSandbox(sb)
	go s.waitSandbox(s.bg, sb, task)
	s.log.Info("sandbox running", "pod", meta.GetNamespace()+"/"+meta.GetName(), "sandbox", id, "ips", sb.IPs)
	return id, nil
}

// podCgroupParent is the cgroup a pod's containers are made under: the
// kubelet's, else one per pod under the runtime's parent.
func (s *Service) podCgroupParent(cfg *runtimeapi.PodSandboxConfig) string {
	if p := cfg.GetLinux().GetCgroupParent(); p != "" {
		return p
	}
	return path.Join(s.cgroupParent, "pod"+cfg.GetMetadata().GetUid())
}

// withSandboxNamespaces puts the pause process in the sandbox's network
// namespace, or the node's ones that the config asks for.
func withSandboxNamespaces(sb *sandbox) oci.SpecOpts {
	nsOpts := sb.Config.GetLinux().GetSecurityContext().GetNamespaceOptions()
	return func(ctx context.Context, cl oci.Client, c *containers.Container, spec *oci.Spec) error {
		if sb.hostNetwork() {
			if err := oci.WithHostNamespace(specs.NetworkNamespace)(ctx, cl, c, spec); err != nil {
				return err
			}
			if err := oci.WithHostNamespace(specs.UTSNamespace)(ctx, cl, c, spec); err != nil {
				return err
			}
		} else {
			if err := oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.NetworkNamespace, Path: sb.NetNS})(ctx, cl, c, spec); err != nil {
				return err
			}
		}
		if nsOpts.GetPid() == runtimeapi.NamespaceMode_NODE {
			if err := oci.WithHostNamespace(specs.PIDNamespace)(ctx, cl, c, spec); err != nil {
				return err
			}
		}
		if nsOpts.GetIpc() == runtimeapi.NamespaceMode_NODE {
			if err := oci.WithHostNamespace(specs.IPCNamespace)(ctx, cl, c, spec); err != nil {
				return err
			}
		}
		return nil
	}
}

// sandboxSysctls are the config's sysctls over the runtime's defaults
// (which are network sysctls, so only for a sandbox of its own network).
func (s *Service) sandboxSysctls(sb *sandbox) map[string]string {
	out := map[string]string{}
	if !sb.hostNetwork() {
		for k, v := range s.defaultSysctls {
			out[k] = v
		}
	}
	for k, v := range sb.Config.GetLinux().GetSysctls() {
		out[k] = v
	}
	return out
}

func withSysctls(sysctls map[string]string) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, spec *oci.Spec) error {
		if len(sysctls) == 0 {
			return nil
		}
		if spec.Linux == nil {
			spec.Linux = &specs.Linux{}
		}
		if spec.Linux.Sysctl == nil {
			spec.Linux.Sysctl = map[string]string{}
		}
		for k, v := range sysctls {
			spec.Linux.Sysctl[k] = v
		}
		return nil
	}
}

// writeSandboxFiles writes resolv.conf (the config's, or the node's),
// hostname and hosts in the sandbox's directory.
func (s *Service) writeSandboxFiles(sb *sandbox) error {
	resolv := sandboxfiles.ResolvConf(sb.Config.GetDnsConfig())
	if resolv == nil {
		b, err := os.ReadFile("/etc/resolv.conf")
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		resolv = b
	}
	hostname := sb.Config.GetHostname()
	if sb.hostNetwork() {
		hostname, _ = os.Hostname()
	}
	files := map[string][]byte{
		"resolv.conf": resolv,
		"hostname":    sandboxfiles.Hostname(hostname),
		"hosts":       sandboxfiles.Hosts(hostname, sb.IPs),
	}
	if sb.hostNetwork() {
		if b, err := os.ReadFile("/etc/hosts"); err == nil {
			files["hosts"] = b
		}
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(sb.Dir, name), data, 0o644); err != nil {
			return fmt.Errorf("write sandbox %s: %w", name, err)
		}
	}
	return nil
}

func podNetwork(sb *sandbox) *cni.PodNetwork {
	m := sb.Config.GetMetadata()
	pn := &cni.PodNetwork{Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUid(), SandboxID: sb.ID, NetNS: sb.NetNS}
	for _, p := range sb.Config.GetPortMappings() {
		if p.GetHostPort() <= 0 {
			continue
		}
		pn.PortMappings = append(pn.PortMappings, cni.PortMapping{
			HostPort: p.GetHostPort(), ContainerPort: p.GetContainerPort(),
			Protocol: strings.ToLower(p.GetProtocol().String()), HostIP: p.GetHostIp(),
		})
	}
	return pn
}

// cniAdd runs CNI ADD in a span of its own.
func (s *Service) cniAdd(ctx context.Context, sb *sandbox) ([]string, error) {
	ctx, span := s.tracer.Start(ctx, "CNI ADD")
	defer span.End()
	m := sb.Config.GetMetadata()
	span.SetAttributes(attribute.String("k8s.pod.name", m.GetName()), attribute.String("k8s.namespace.name", m.GetNamespace()),
		attribute.String("cri.sandbox.id", sb.ID), attribute.String("cni.netns", sb.NetNS))
	ips, err := s.cni.SetUpPod(ctx, podNetwork(sb))
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		return nil, err
	}
	span.SetAttributes(attribute.StringSlice("k8s.pod.ips", ips))
	return ips, nil
}

// cniDel runs CNI DEL in a span of its own.
func (s *Service) cniDel(ctx context.Context, sb *sandbox) error {
	ctx, span := s.tracer.Start(ctx, "CNI DEL")
	defer span.End()
	span.SetAttributes(attribute.String("cri.sandbox.id", sb.ID))
	if err := s.cni.TearDownPod(ctx, podNetwork(sb)); err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		return err
	}
	return nil
}

// waitSandbox marks the sandbox not ready when its pause process exits.
func (s *Service) waitSandbox(ctx context.Context, sb *sandbox, task containerd.Task) {
	st := s.waitTask(ctx, task)
	if st == nil {
		return
	}
	s.store.update(func() { sb.State, sb.PID = runtimeapi.PodSandboxState_SANDBOX_NOTREADY, 0 })
	if _, err := task.Delete(ctx); err != nil && !isNotFound(err) && ctx.Err() == nil {
		s.log.Warn("delete exited sandbox task", "sandbox", sb.ID, "err", err)
	}
}

// StopPodSandbox stops the sandbox's containers and pause process and
// detaches it from the pod network (CNI DEL). It may be called again.
func (s *Service) StopPodSandbox(ctx context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	sb, err := s.store.sandbox(req.GetPodSandboxId())
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return &runtimeapi.StopPodSandboxResponse{}, nil
		}
		return nil, toGRPC(err)
	}
	if err := s.stopPodSandbox(s.ctx(ctx), sb); err != nil {
		return nil, toGRPC(err)
	}
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

func (s *Service) stopPodSandbox(ctx context.Context, sb *sandbox) error {
	for _, c := range s.store.listContainers(sb.ID) {
		if err := s.stopContainer(ctx, c, 0); err != nil {
			return fmt.Errorf("stop container %s: %w", c.ID, err)
		}
	}
	if err := s.killTask(ctx, sb.ID, 0); err != nil {
		return fmt.Errorf("stop sandbox: %w", err)
	}
	s.store.update(func() { sb.State, sb.PID = runtimeapi.PodSandboxState_SANDBOX_NOTREADY, 0 })
	var ready bool
	s.store.read(func() { ready = sb.networkReady })
	if ready {
		if err := s.cniDel(ctx, sb); err != nil {
			return err
		}
		s.store.update(func() { sb.networkReady = false })
	}
	if sb.NetNS != "" {
		if err := netns.LoadNetNS(sb.NetNS).Remove(); err != nil {
			return fmt.Errorf("remove network namespace %s: %w", sb.NetNS, err)
		}
	}
	s.setLabels(ctx, sb.ID, map[string]string{labelStopped: "true"})
	return nil
}

// RemovePodSandbox stops what still runs and deletes the sandbox, its
// containers and files.
func (s *Service) RemovePodSandbox(ctx context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	sb, err := s.store.sandbox(req.GetPodSandboxId())
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return &runtimeapi.RemovePodSandboxResponse{}, nil
		}
		return nil, toGRPC(err)
	}
	ctx = s.ctx(ctx)
	if err := s.stopPodSandbox(ctx, sb); err != nil {
		return nil, toGRPC(err)
	}
	for _, c := range s.store.listContainers(sb.ID) {
		if err := s.removeContainer(ctx, c); err != nil {
			return nil, toGRPC(err)
		}
	}
	if err := s.deleteContainerd(ctx, sb.ID); err != nil {
		return nil, toGRPC(err)
	}
	_ = os.RemoveAll(sb.Dir)
	s.store.deleteSandbox(sb.ID)
	return &runtimeapi.RemovePodSandboxResponse{}, nil
}

// PodSandboxStatus reports a sandbox with its pod IPs.
func (s *Service) PodSandboxStatus(ctx context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	sb, err := s.store.sandbox(req.GetPodSandboxId())
	if err != nil {
		return nil, toGRPC(err)
	}
	var st *runtimeapi.PodSandboxStatus
	var pid uint32
	s.store.read(func() {
		pid = sb.PID
		nsOpts := sb.Config.GetLinux().GetSecurityContext().GetNamespaceOptions()
		st = &runtimeapi.PodSandboxStatus{
			Id: sb.ID, Metadata: sb.Config.GetMetadata(), State: sb.State, CreatedAt: sb.CreatedAt.UnixNano(),
			Linux: &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{Options: &runtimeapi.NamespaceOption{
				Network: nsOpts.GetNetwork(), Pid: nsOpts.GetPid(), Ipc: nsOpts.GetIpc(),
			}}},
			Labels: sb.Config.GetLabels(), Annotations: sb.Config.GetAnnotations(),
		}
		if len(sb.IPs) > 0 && sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
			st.Network = &runtimeapi.PodSandboxNetworkStatus{Ip: sb.IPs[0]}
			for _, ip := range sb.IPs[1:] {
				st.Network.AdditionalIps = append(st.Network.AdditionalIps, &runtimeapi.PodIP{Ip: ip})
			}
		}
	})
	resp := &runtimeapi.PodSandboxStatusResponse{Status: st}
	if req.GetVerbose() {
		resp.Info = map[string]string{"info": fmt.Sprintf(`{"pid":%d,"netns":%q,"image":%q}`, pid, sb.NetNS, s.sandboxImage)}
	}
	return resp, nil
}

// ListPodSandbox lists the sandboxes the filter selects.
func (s *Service) ListPodSandbox(ctx context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	var all []*runtimeapi.PodSandbox
	sbs := s.store.listSandboxes()
	s.store.read(func() {
		for _, sb := range sbs {
			all = append(all, &runtimeapi.PodSandbox{
				Id: sb.ID, Metadata: sb.Config.GetMetadata(), State: sb.State, CreatedAt: sb.CreatedAt.UnixNano(),
				Labels: sb.Config.GetLabels(), Annotations: sb.Config.GetAnnotations(),
			})
		}
	})
	return &runtimeapi.ListPodSandboxResponse{Items: filter.Sandboxes(all, req.GetFilter())}, nil
}
