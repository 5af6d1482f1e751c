package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/kubelet/internal/events"
	"podline.dev/services/kubelet/internal/fieldpath"
	"podline.dev/services/kubelet/internal/poddns"
	"podline.dev/services/kubelet/internal/runtime"
)

// SyncInput is one sync of one pod.
type SyncInput struct {
	Pod *corev1.Pod
	// Status is what the runtime holds for the pod now.
	Status *PodStatus
	// Actions, when computed by the caller already (nil: computed here).
	Actions *Actions
	// Volumes are the pod's volumes' host paths, by name.
	Volumes map[string]string
	// Env resolves the downward API (host IPs, node allocatable); the pod
	// IPs are filled in from the sandbox.
	Env fieldpath.Env
}

// SyncResult says when to sync again.
type SyncResult struct {
	// RequeueAfter > 0 asks for a sync after that long (a backoff ends).
	RequeueAfter time.Duration
	// Err is the first error, if any step failed.
	Err error
}

func (r *SyncResult) fail(err error) {
	if r.Err == nil {
		r.Err = err
	}
}

func (r *SyncResult) retryIn(d time.Duration) {
	if d > 0 && (r.RequeueAfter == 0 || d < r.RequeueAfter) {
		r.RequeueAfter = d
	}
}

// SyncPod brings the pod's containers to what its spec asks.
func (m *Manager) SyncPod(ctx context.Context, in SyncInput) SyncResult {
	pod, st := in.Pod, in.Status
	uid := pod.GetMetadata().GetUid()
	var res SyncResult
	actions := in.Actions
	if actions == nil {
		a := ComputePodActions(pod, st, m.probes)
		actions = &a
	}

	if actions.KillPod {
		if actions.CreateSandbox && len(st.Sandboxes) > 0 {
			m.recorder.Eventf(pod, "", events.Normal, "SandboxChanged", "Pod sandbox changed, it will be killed and re-created.")
		}
		if err := m.KillPod(ctx, pod, st, nil); err != nil {
			res.fail(err)
			return res
		}
		if !actions.CreateSandbox {
			return res
		}
	} else {
		for _, k := range actions.Kill {
			grace := gracePeriod(pod, k.Probe, nil)
			m.recorder.Eventf(pod, events.ContainerPath(k.Name, false), events.Normal, "Killing", "%s", k.Message)
			if err := m.killContainer(ctx, pod, k.Container, containerSpec(pod, k.Name), grace); err != nil {
				res.fail(err)
				return res
			}
		}
	}

	var sb *runtime.Sandbox
	if actions.CreateSandbox {
		var err error
		sb, err = m.createSandbox(ctx, pod, actions.Attempt)
		if err != nil {
			res.fail(err)
			return res
		}
	} else {
		sb = st.ReadySandbox()
		if sb == nil {
			res.fail(errors.New("no ready sandbox"))
			return res
		}
		if !sb.HostNetwork {
			// A restarted node may have lost the pod's hosts file.
			if _, err := os.Stat(EtcHostsPath(m.rootDir, uid)); err != nil {
				_ = m.writeEtcHosts(pod, sb.IPs)
			}
		}
	}
	env := in.Env
	env.PodIPs = sb.IPs
	if sb.HostNetwork {
		env.PodIPs = env.HostIPs
	}

	start := func(c *corev1.Container, init bool) {
		err := m.startContainer(ctx, pod, sb, st, c, init, in.Volumes, env)
		var w *waitErr
		switch {
		case err == nil:
			m.Reasons.Clear(uid, c.GetName())
		case errors.As(err, &w):
			m.Reasons.Set(uid, c.GetName(), w.reason, w.message)
			res.retryIn(w.retry)
			if w.reason != ReasonCrashLoopBackOff && w.reason != ReasonImagePullBackOff {
				res.fail(err)
			}
		default:
			res.fail(err)
		}
	}
	if actions.NextInit != nil {
		start(actions.NextInit, true)
		return res
	}
	for _, i := range actions.Start {
		start(pod.GetSpec().GetContainers()[i], false)
	}
	m.prune(ctx, pod, st, sb)
	return res
}

func containerSpec(pod *corev1.Pod, name string) *corev1.Container {
	for _, c := range pod.GetSpec().GetContainers() {
		if c.GetName() == name {
			return c
		}
	}
	for _, c := range pod.GetSpec().GetInitContainers() {
		if c.GetName() == name {
			return c
		}
	}
	return nil
}

// createSandbox runs the sandbox, which the runtime attaches to the pod
// network, and writes the pod's /etc/hosts with the IPs it got.
func (m *Manager) createSandbox(ctx context.Context, pod *corev1.Pod, attempt int) (*runtime.Sandbox, error) {
	hostNet := pod.GetSpec().GetHostNetwork()
	if !hostNet {
		if err := m.runtime.Status(ctx); errors.Is(err, runtime.ErrNetworkNotReady) {
			m.recorder.Eventf(pod, "", events.Warning, "NetworkNotReady", "network is not ready: %v", err)
			return nil, err
		}
	}
	cfg, dnsErr := m.sandboxConfig(pod, attempt)
	if dnsErr != nil {
		m.recorder.Eventf(pod, "", events.Warning, "MissingClusterDNS", "pod: %q. %v", FormatPod(pod), dnsErr)
	}
	start := m.clock.Now()
	sctx, span := m.tracer.Start(ctx, "RunPodSandbox")
	sb, err := m.runtime.RunPodSandbox(sctx, cfg)
	endSpan(span, err)
	if err != nil {
		m.recorder.Eventf(pod, "", events.Warning, "FailedCreatePodSandBox", "Failed to create pod sandbox: %v", err)
		return nil, err
	}
	span.SetAttributes(attribute.String("sandbox", sb.ID), attribute.StringSlice("ips", sb.IPs))
	m.log.Debug("sandbox running", "pod", FormatPod(pod), "ips", sb.IPs, "took", m.clock.Since(start))
	if !hostNet {
		if err := m.writeEtcHosts(pod, sb.IPs); err != nil {
			return nil, err
		}
	}
	return sb, nil
}

// sandboxConfig is what the runtime runs a pod's sandbox with: its
// hostname, resolver configuration, hostPorts, labels and log directory.
// err is poddns.ErrNoClusterDNS when the pod asks for cluster DNS the
// kubelet has not been given.
func (m *Manager) sandboxConfig(pod *corev1.Pod, attempt int) (*runtime.SandboxConfig, error) {
	md := pod.GetMetadata()
	dns, err := poddns.ForPod(pod, m.dns, poddns.ParseResolvConf(m.readResolvConf()))
	return &runtime.SandboxConfig{
		Pod:          runtime.PodRef{UID: md.GetUid(), Name: md.GetName(), Namespace: md.GetNamespace()},
		Hostname:     poddns.SandboxHostname(pod, m.dns.Domain),
		HostNetwork:  pod.GetSpec().GetHostNetwork(),
		Attempt:      attempt,
		LogDir:       LogDir(m.logsDir, pod),
		DNS:          &runtime.DNSConfig{Servers: dns.Servers, Searches: dns.Searches, Options: dns.Options},
		Ports:        PortMappings(pod),
		Labels:       md.GetLabels(),
		Annotations:  md.GetAnnotations(),
		CgroupParent: m.podCgroup(md.GetUid()),
	}, err
}

func (m *Manager) readResolvConf() []byte {
	if m.resolvConf == "" {
		return nil
	}
	b, err := os.ReadFile(m.resolvConf)
	if err != nil {
		m.log.Warn("read resolv.conf", "path", m.resolvConf, "err", err)
	}
	return b
}

func (m *Manager) podCgroup(uid string) string {
	if m.cgroupRoot == "" {
		return ""
	}
	return path.Join(m.cgroupRoot, "pod"+uid)
}

func endSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// PortMappings are the pod's hostPorts.
func PortMappings(pod *corev1.Pod) []runtime.PortMapping {
	var out []runtime.PortMapping
	for _, c := range pod.GetSpec().GetContainers() {
		for _, p := range c.GetPorts() {
			if p.GetHostPort() <= 0 {
				continue
			}
			proto := p.GetProtocol()
			if proto == "" {
				proto = "TCP"
			}
			out = append(out, runtime.PortMapping{HostPort: p.GetHostPort(), ContainerPort: p.GetContainerPort(), Protocol: proto, HostIP: p.GetHostIp()})
		}
	}
	return out
}

// crashKey identifies a container across restarts for its backoff.
func crashKey(pod *corev1.Pod, c *corev1.Container) string {
	md := pod.GetMetadata()
	return md.GetName() + "_" + md.GetNamespace() + "_" + md.GetUid() + "_" + c.GetName()
}

// FormatPod names a pod in messages: name_namespace(uid).
func FormatPod(pod *corev1.Pod) string {
	md := pod.GetMetadata()
	return fmt.Sprintf("%s_%s(%s)", md.GetName(), md.GetNamespace(), md.GetUid())
}

// startContainer pulls, creates and starts one container, unless it is
// in CrashLoopBackOff.
func (m *Manager) startContainer(ctx context.Context, pod *corev1.Pod, sb *runtime.Sandbox, st *PodStatus, c *corev1.Container, init bool, vols map[string]string, env fieldpath.Env) error {
	ref := events.ContainerPath(c.GetName(), init)
	attempt := 0
	if l := st.Latest(c.GetName()); l != nil {
		attempt = l.Attempt + 1
		if l.State == runtime.ContainerCreated || l.State == runtime.ContainerUnknown {
			// Left over from a failed start: replace it.
			_ = m.runtime.RemoveContainer(ctx, l.ID)
			attempt = l.Attempt
		}
	}
	if last := st.LatestExited(c.GetName()); last != nil {
		key := crashKey(pod, c)
		if m.crashBackoff.IsInBackOffSince(key, last.FinishedAt) {
			m.recorder.Eventf(pod, ref, events.Warning, "BackOff", "Back-off restarting failed container %s in pod %s", c.GetName(), FormatPod(pod))
			return &waitErr{
				reason:  ReasonCrashLoopBackOff,
				message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", m.crashBackoff.Get(key), c.GetName(), FormatPod(pod)),
				retry:   m.crashBackoff.Remaining(key, last.FinishedAt),
			}
		}
		m.crashBackoff.Next(key, last.FinishedAt)
	}

	start := m.clock.Now()
	if err := m.ensureImage(ctx, pod, c, init); err != nil {
		return err
	}
	pulled := m.clock.Now()

	cfg, err := m.containerConfig(ctx, pod, c, init, attempt, vols, env)
	if err == nil {
		cfg.Sandbox, _ = m.sandboxConfig(pod, sb.Attempt)
	}
	if err != nil {
		m.recorder.Eventf(pod, ref, events.Warning, "Failed", "Error: %v", err)
		return &waitErr{reason: ReasonCreateConfigErr, message: err.Error()}
	}
	cctx, span := m.tracer.Start(ctx, "CreateContainer")
	span.SetAttributes(attribute.String("container", c.GetName()), attribute.Int("attempt", attempt))
	id, err := m.runtime.CreateContainer(cctx, sb, cfg)
	endSpan(span, err)
	if err != nil {
		m.recorder.Eventf(pod, ref, events.Warning, "Failed", "Error: %v", err)
		return &waitErr{reason: ReasonCreateContainerErr, message: err.Error()}
	}
	m.recorder.Eventf(pod, ref, events.Normal, "Created", "Created container: %s", c.GetName())

	sctx, span := m.tracer.Start(ctx, "StartContainer")
	span.SetAttributes(attribute.String("container", c.GetName()), attribute.String("id", id))
	err = m.runtime.StartContainer(sctx, id)
	endSpan(span, err)
	if err != nil {
		m.recorder.Eventf(pod, ref, events.Warning, "Failed", "Error: failed to start container %q: %v", c.GetName(), err)
		return &waitErr{reason: ReasonRunContainerError, message: err.Error()}
	}
	m.recorder.Eventf(pod, ref, events.Normal, "Started", "Started container %s", c.GetName())
	m.log.Debug("container started", "pod", FormatPod(pod), "container", c.GetName(),
		"image", pulled.Sub(start), "took", m.clock.Since(start))

	if h := c.GetLifecycle().GetPostStart(); h != nil {
		if msg, err := m.runHook(ctx, pod, c, id, env.PodIPs, h, 30*time.Second); err != nil {
			m.recorder.Eventf(pod, ref, events.Warning, "FailedPostStartHook", "PostStartHook failed: %s", msg)
			_ = m.runtime.StopContainer(context.WithoutCancel(ctx), id, gracePeriod(pod, nil, nil))
			return &waitErr{reason: "PostStartHookError", message: msg}
		}
	}
	return nil
}

// containerConfig builds what CreateContainer needs.
func (m *Manager) containerConfig(ctx context.Context, pod *corev1.Pod, c *corev1.Container, init bool, attempt int, vols map[string]string, env fieldpath.Env) (*runtime.ContainerConfig, error) {
	envVars, err := m.containerEnv(ctx, pod, c, env)
	if err != nil {
		return nil, err
	}
	etcHosts := ""
	if !pod.GetSpec().GetHostNetwork() {
		etcHosts = EtcHostsPath(m.rootDir, pod.GetMetadata().GetUid())
	}
	mounts, err := containerMounts(pod, c, vols, etcHosts)
	if err != nil {
		return nil, err
	}
	expand := envMapping(envVars)
	return &runtime.ContainerConfig{
		Name:       c.GetName(),
		Image:      c.GetImage(),
		Command:    expandAll(c.GetCommand(), expand),
		Args:       expandAll(c.GetArgs(), expand),
		Env:        envVars,
		WorkingDir: c.GetWorkingDir(),
		Mounts:     mounts,
		Resources:  Resources(c),
		Attempt:    attempt,
		Init:       init,
		Hash:       ContainerHash(c),
		LogPath:    LogPath(c.GetName(), attempt),
		TTY:        c.GetTty(),
		Stdin:      c.GetStdin(),
	}, nil
}

// prune removes container instances older than the last exited one of
// each container, and sandboxes no container uses, as the kubelet's
// garbage collector keeps one dead instance per container.
func (m *Manager) prune(ctx context.Context, pod *corev1.Pod, st *PodStatus, current *runtime.Sandbox) {
	seenExited := map[string]bool{}
	used := map[string]bool{current.ID: true}
	for _, c := range st.Containers { // newest first
		if c.State != runtime.ContainerExited {
			used[c.SandboxID] = true
			continue
		}
		if !seenExited[c.Name] {
			seenExited[c.Name] = true
			used[c.SandboxID] = true
			continue
		}
		if err := m.runtime.RemoveContainer(ctx, c.ID); err != nil {
			m.log.Warn("remove old container", "pod", FormatPod(pod), "container", c.Name, "err", err)
			continue
		}
		if c.LogPath != "" {
			_ = os.Remove(c.LogPath)
		}
	}
	for _, sb := range st.Sandboxes {
		if !used[sb.ID] && sb.State != runtime.SandboxReady {
			_ = m.runtime.RemovePodSandbox(ctx, sb.ID)
		}
	}
}
