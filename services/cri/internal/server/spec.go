package server

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/contrib/seccomp"
	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/oci"
	imagespec "github.com/opencontainers/image-spec/specs-go/v1"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Seccomp profile names of the CRI's deprecated path fields.
const (
	profileRuntimeDefault = "runtime/default"
	profileDockerDefault  = "docker/default"
	profileUnconfined     = "unconfined"
	profileLocalhost      = "localhost/"
)

// containerSpec is the OCI spec of a container of sb, from its CRI
// config and its image's config.
func (s *Service) containerSpec(sb *sandbox, id string, cfg *runtimeapi.ContainerConfig, img containerd.Image, imgCfg imagespec.ImageConfig) ([]oci.SpecOpts, error) {
	argv, err := containerArgs(imgCfg.Entrypoint, imgCfg.Cmd, cfg.GetCommand(), cfg.GetArgs())
	if err != nil {
		return nil, err
	}
	env := make([]string, 0, len(cfg.GetEnvs())+1)
	if !sb.hostNetwork() {
		env = append(env, "HOSTNAME="+sb.Config.GetHostname())
	}
	for _, kv := range cfg.GetEnvs() {
		env = append(env, kv.GetKey()+"="+string(kv.GetValue()))
	}
	var pid uint32
	s.store.read(func() { pid = sb.PID })
	opts := []oci.SpecOpts{
		oci.WithImageConfig(img),
		oci.WithProcessArgs(argv...),
		oci.WithEnv(env),
		oci.WithCgroup(path.Join(s.podCgroupParent(sb.Config), id)),
		withContainerNamespaces(sb, pid, cfg.GetLinux().GetSecurityContext().GetNamespaceOptions()),
		oci.WithAnnotations(map[string]string{
			annotationSandboxID: sb.ID, annotationContainerType: containerTypeContainer,
			annotationSandboxName: sandboxName(sb.Config.GetMetadata()), annotationContainerName: cfg.GetMetadata().GetName(),
		}),
		oci.WithAnnotations(cfg.GetAnnotations()),
	}
	if wd := cfg.GetWorkingDir(); wd != "" {
		opts = append(opts, oci.WithProcessCwd(wd))
	} else if imgCfg.WorkingDir != "" {
		opts = append(opts, oci.WithProcessCwd(imgCfg.WorkingDir))
	}
	if cfg.GetTty() {
		opts = append(opts, oci.WithTTY)
	}
	mounts, err := s.containerMounts(sb, cfg)
	if err != nil {
		return nil, err
	}
	opts = append(opts, withMounts(mounts))
	if res := cfg.GetLinux().GetResources(); res != nil {
		opts = append(opts, withResources(res))
	}
	sec, err := s.securityOpts(cfg.GetLinux().GetSecurityContext())
	if err != nil {
		return nil, err
	}
	return append(opts, sec...), nil
}

// containerArgs applies the CRI's rule: a command replaces the image's
// entrypoint and drops its cmd; args alone replace the cmd.
func containerArgs(entrypoint, cmd, command, args []string) ([]string, error) {
	if len(command) == 0 {
		command = entrypoint
		if len(args) == 0 {
			args = cmd
		}
	}
	argv := append(append([]string{}, command...), args...)
	if len(argv) == 0 {
		return nil, fmt.Errorf("no command specified: %w", ErrInvalid)
	}
	return argv, nil
}

// withContainerNamespaces joins the sandbox's network, IPC and UTS
// namespaces (through its pause process), and its PID namespace when the
// pod shares one; or the node's when the config asks for them.
func withContainerNamespaces(sb *sandbox, pausePID uint32, nsOpts *runtimeapi.NamespaceOption) oci.SpecOpts {
	return func(ctx context.Context, cl oci.Client, c *containers.Container, spec *oci.Spec) error {
		proc := func(ns string) string { return fmt.Sprintf("/proc/%d/ns/%s", pausePID, ns) }
		set := []oci.SpecOpts{}
		if sb.hostNetwork() {
			set = append(set, oci.WithHostNamespace(specs.NetworkNamespace), oci.WithHostNamespace(specs.UTSNamespace))
		} else {
			set = append(set,
				oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.NetworkNamespace, Path: sb.NetNS}),
				oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.UTSNamespace, Path: proc("uts")}))
		}
		if nsOpts.GetIpc() == runtimeapi.NamespaceMode_NODE {
			set = append(set, oci.WithHostNamespace(specs.IPCNamespace))
		} else {
			set = append(set, oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.IPCNamespace, Path: proc("ipc")}))
		}
		switch nsOpts.GetPid() {
		case runtimeapi.NamespaceMode_NODE:
			set = append(set, oci.WithHostNamespace(specs.PIDNamespace))
		case runtimeapi.NamespaceMode_POD:
			set = append(set, oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.PIDNamespace, Path: proc("pid")}))
		}
		return oci.Compose(set...)(ctx, cl, c, spec)
	}
}

// containerMounts are the config's mounts, and the sandbox's resolv.conf,
// hostname and hosts where the config mounts none of its own.
func (s *Service) containerMounts(sb *sandbox, cfg *runtimeapi.ContainerConfig) ([]specs.Mount, error) {
	var out []specs.Mount
	has := map[string]bool{}
	for _, m := range cfg.GetMounts() {
		has[filepath.Clean(m.GetContainerPath())] = true
	}
	ro := cfg.GetLinux().GetSecurityContext().GetReadonlyRootfs()
	for _, f := range []struct{ name, dest string }{
		{"hostname", "/etc/hostname"}, {"hosts", "/etc/hosts"}, {"resolv.conf", "/etc/resolv.conf"},
	} {
		if has[f.dest] {
			continue
		}
		opts := []string{"rbind", "rprivate", "rw"}
		if ro {
			opts[2] = "ro"
		}
		out = append(out, specs.Mount{Destination: f.dest, Type: "bind", Source: filepath.Join(sb.Dir, f.name), Options: opts})
	}
	for _, m := range cfg.GetMounts() {
		src := m.GetHostPath()
		if src == "" || m.GetContainerPath() == "" {
			return nil, fmt.Errorf("mount needs a host and a container path: %w", ErrInvalid)
		}
		if _, err := os.Stat(src); os.IsNotExist(err) {
			// As Kubernetes' runtimes do: a missing host path is made
			// a directory.
			if err := os.MkdirAll(src, 0o755); err != nil {
				return nil, err
			}
		}
		if resolved, err := filepath.EvalSymlinks(src); err == nil {
			src = resolved
		}
		opts := []string{"rbind"}
		switch m.GetPropagation() {
		case runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL:
			opts = append(opts, "rshared")
		case runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER:
			opts = append(opts, "rslave")
		default:
			opts = append(opts, "rprivate")
		}
		if m.GetReadonly() {
			opts = append(opts, "ro")
		} else {
			opts = append(opts, "rw")
		}
		out = append(out, specs.Mount{Destination: m.GetContainerPath(), Type: "bind", Source: src, Options: opts})
	}
	return out, nil
}

// withMounts adds mounts, each replacing a default at the same place.
func withMounts(mounts []specs.Mount) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		for _, m := range mounts {
			kept := s.Mounts[:0]
			for _, existing := range s.Mounts {
				if filepath.Clean(existing.Destination) != filepath.Clean(m.Destination) {
					kept = append(kept, existing)
				}
			}
			s.Mounts = append(kept, m)
		}
		return nil
	}
}

// withResources sets the container's cgroup limits.
func withResources(r *runtimeapi.LinuxContainerResources) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		if s.Linux == nil {
			s.Linux = &specs.Linux{}
		}
		s.Linux.Resources = linuxResources(s.Linux.Resources, r)
		if r.GetOomScoreAdj() != 0 {
			if s.Process == nil {
				s.Process = &specs.Process{}
			}
			adj := int(r.GetOomScoreAdj())
			s.Process.OOMScoreAdj = &adj
		}
		return nil
	}
}

// linuxResources merges CRI resources into OCI ones.
func linuxResources(out *specs.LinuxResources, r *runtimeapi.LinuxContainerResources) *specs.LinuxResources {
	if out == nil {
		out = &specs.LinuxResources{}
	}
	if out.CPU == nil {
		out.CPU = &specs.LinuxCPU{}
	}
	if out.Memory == nil {
		out.Memory = &specs.LinuxMemory{}
	}
	if v := r.GetCpuShares(); v > 0 {
		shares := uint64(v)
		out.CPU.Shares = &shares
	}
	if v := r.GetCpuQuota(); v > 0 {
		out.CPU.Quota = &v
	}
	if v := r.GetCpuPeriod(); v > 0 {
		period := uint64(v)
		out.CPU.Period = &period
	}
	if v := r.GetCpusetCpus(); v != "" {
		out.CPU.Cpus = v
	}
	if v := r.GetCpusetMems(); v != "" {
		out.CPU.Mems = v
	}
	if v := r.GetMemoryLimitInBytes(); v > 0 {
		out.Memory.Limit = &v
	}
	if v := r.GetMemorySwapLimitInBytes(); v > 0 {
		out.Memory.Swap = &v
	}
	if len(r.GetUnified()) > 0 {
		if out.Unified == nil {
			out.Unified = map[string]string{}
		}
		for k, v := range r.GetUnified() {
			out.Unified[k] = v
		}
	}
	return out
}

// securityOpts applies a container's security context: user and groups,
// privileged (when allowed), capabilities on the default set, a read-only
// root, no_new_privs, masked and read-only /proc paths, and seccomp.
func (s *Service) securityOpts(sc *runtimeapi.LinuxContainerSecurityContext) ([]oci.SpecOpts, error) {
	var opts []oci.SpecOpts
	switch {
	case sc.GetRunAsUser() != nil && sc.GetRunAsGroup() != nil:
		opts = append(opts, oci.WithUser(fmt.Sprintf("%d:%d", sc.GetRunAsUser().GetValue(), sc.GetRunAsGroup().GetValue())))
	case sc.GetRunAsUser() != nil:
		opts = append(opts, oci.WithUserID(uint32(sc.GetRunAsUser().GetValue())))
	case sc.GetRunAsUsername() != "":
		opts = append(opts, oci.WithUsername(sc.GetRunAsUsername()))
	}
	if sc.GetRunAsGroup() != nil && sc.GetRunAsUser() == nil && sc.GetRunAsUsername() == "" {
		return nil, fmt.Errorf("runAsGroup %d is set without a user: %w", sc.GetRunAsGroup().GetValue(), ErrInvalid)
	}
	if sc.GetRunAsGroup() != nil && sc.GetRunAsUsername() != "" {
		opts = append(opts, withGID(uint32(sc.GetRunAsGroup().GetValue())))
	}
	opts = append(opts, withImageGroups(), withSupplementalGroups(sc.GetSupplementalGroups()))

	if sc.GetPrivileged() {
		if !s.allowPrivileged {
			return nil, ErrPrivilegedRefused
		}
		opts = append(opts, oci.WithPrivileged, oci.WithHostDevices, oci.WithAllDevicesAllowed)
	} else {
		if caps := sc.GetCapabilities(); caps != nil {
			opts = append(opts, withCapabilities(caps))
		}
		if sc != nil && sc.MaskedPaths != nil {
			opts = append(opts, oci.WithMaskedPaths(sc.GetMaskedPaths()))
		}
		if sc != nil && sc.ReadonlyPaths != nil {
			opts = append(opts, oci.WithReadonlyPaths(sc.GetReadonlyPaths()))
		}
	}
	if sc.GetReadonlyRootfs() {
		opts = append(opts, oci.WithRootFSReadonly())
	}
	opts = append(opts, withNoNewPrivs(sc.GetNoNewPrivs()))
	// Seccomp goes last: the default profile depends on the capabilities.
	if !sc.GetPrivileged() {
		sp, err := seccompOpt(sc)
		if err != nil {
			return nil, err
		}
		if sp != nil {
			opts = append(opts, sp)
		}
	}
	return opts, nil
}

// withNoNewPrivs sets no_new_privs as the config says: on only for
// allowPrivilegeEscalation=false, as in Kubernetes.
func withNoNewPrivs(on bool) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		s.Process.NoNewPrivileges = on
		return nil
	}
}

func withGID(gid uint32) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		s.Process.User.GID = gid
		return nil
	}
}

// withImageGroups adds the groups /etc/group of the image gives the
// process's user.
func withImageGroups() oci.SpecOpts {
	return func(ctx context.Context, cl oci.Client, c *containers.Container, s *oci.Spec) error {
		return oci.WithAdditionalGIDs(fmt.Sprint(s.Process.User.UID))(ctx, cl, c, s)
	}
}

func withSupplementalGroups(groups []int64) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		for _, g := range groups {
			s.Process.User.AdditionalGids = append(s.Process.User.AdditionalGids, uint32(g))
		}
		return nil
	}
}

// capName spells a CRI capability as the OCI spec does (CAP_NET_ADMIN).
func capName(c string) string {
	c = strings.ToUpper(c)
	if !strings.HasPrefix(c, "CAP_") {
		c = "CAP_" + c
	}
	return c
}

// withCapabilities applies add and drop to the default set; ALL in add
// grants every capability the runtime holds, ALL in drop starts from none.
func withCapabilities(caps *runtimeapi.Capability) oci.SpecOpts {
	return func(ctx context.Context, cl oci.Client, c *containers.Container, s *oci.Spec) error {
		var set []oci.SpecOpts
		var add, drop []string
		for _, a := range caps.GetAddCapabilities() {
			if strings.EqualFold(a, "ALL") {
				set = append(set, oci.WithAllCurrentCapabilities)
				continue
			}
			add = append(add, capName(a))
		}
		for _, d := range caps.GetDropCapabilities() {
			if strings.EqualFold(d, "ALL") {
				set = append(set, oci.WithCapabilities(nil))
				continue
			}
			drop = append(drop, capName(d))
		}
		set = append(set, oci.WithAddedCapabilities(add), oci.WithDroppedCapabilities(drop))
		return oci.Compose(set...)(ctx, cl, c, s)
	}
}

// seccompOpt reads the profile from the security context's Seccomp field,
// or its deprecated path; an unset profile is Unconfined, as in
// Kubernetes (the kubelet sends RuntimeDefault when the pod asks for it).
func seccompOpt(sc *runtimeapi.LinuxContainerSecurityContext) (oci.SpecOpts, error) {
	if p := sc.GetSeccomp(); p != nil {
		switch p.GetProfileType() {
		case runtimeapi.SecurityProfile_RuntimeDefault:
			return seccomp.WithDefaultProfile(), nil
		case runtimeapi.SecurityProfile_Unconfined:
			return nil, nil
		case runtimeapi.SecurityProfile_Localhost:
			if p.GetLocalhostRef() == "" {
				return nil, fmt.Errorf("seccomp Localhost profile without a path: %w", ErrInvalid)
			}
			return localProfile(p.GetLocalhostRef())
		}
	}
	switch path := sc.GetSeccompProfilePath(); {
	case path == "", path == profileUnconfined:
		return nil, nil
	case path == profileRuntimeDefault, path == profileDockerDefault:
		return seccomp.WithDefaultProfile(), nil
	case strings.HasPrefix(path, profileLocalhost):
		return localProfile(strings.TrimPrefix(path, profileLocalhost))
	default:
		return nil, fmt.Errorf("seccomp profile %q: %w", path, ErrInvalid)
	}
}

func localProfile(path string) (oci.SpecOpts, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("seccomp profile %s: %w", path, err)
	}
	return seccomp.WithProfile(path), nil
}
