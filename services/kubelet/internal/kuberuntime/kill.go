package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/kubelet/internal/events"
	"podline.dev/services/kubelet/internal/probes"
	"podline.dev/services/kubelet/internal/runtime"
)

// minGracePeriod is the shortest stop Kubernetes' kubelet gives a container.
const minGracePeriod = 2 * time.Second

// gracePeriod is how long a container gets to stop: the override (a
// deletion's grace period), else the failed probe's, else the pod's
// terminationGracePeriodSeconds (default 30 s); at least 2 s.
func gracePeriod(pod *corev1.Pod, probe *corev1.Probe, override *int64) time.Duration {
	secs := int64(30)
	if spec := pod.GetSpec(); spec != nil && spec.TerminationGracePeriodSeconds != nil {
		secs = *spec.TerminationGracePeriodSeconds
	}
	if probe != nil && probe.TerminationGracePeriodSeconds != nil {
		secs = *probe.TerminationGracePeriodSeconds
	}
	if override != nil {
		secs = *override
	}
	return max(time.Duration(secs)*time.Second, minGracePeriod)
}

// KillPod stops every container of the pod gracefully (preStop, SIGTERM,
// grace period, SIGKILL), tears down its network and stops its sandboxes.
func (m *Manager) KillPod(ctx context.Context, pod *corev1.Pod, st *PodStatus, override *int64) error {
	grace := gracePeriod(pod, nil, override)
	var wg sync.WaitGroup
	errs := make(chan error, len(st.Containers))
	for _, c := range st.Containers {
		if c.State != runtime.ContainerRunning && c.State != runtime.ContainerUnknown && c.State != runtime.ContainerCreated {
			continue
		}
		if pod != nil && c.State == runtime.ContainerRunning {
			m.recorder.Eventf(pod, events.ContainerPath(c.Name, c.Init), events.Normal, "Killing", "Stopping container %s", c.Name)
		}
		wg.Go(func() {
			if err := m.killContainer(ctx, pod, c, containerSpec(pod, c.Name), grace); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	for _, sb := range st.Sandboxes {
		if err := m.stopSandbox(ctx, sb); err != nil {
			all = append(all, err)
		}
	}
	return errors.Join(all...)
}

// stopSandbox stops a sandbox; the runtime detaches it from the pod
// network (CNI DEL).
func (m *Manager) stopSandbox(ctx context.Context, sb *runtime.Sandbox) error {
	if err := m.runtime.StopPodSandbox(ctx, sb.ID); err != nil {
		return fmt.Errorf("stop sandbox %s: %w", sb.ID, err)
	}
	return nil
}

// killContainer runs the preStop hook within the grace period, then stops
// the container with what remains of it.
func (m *Manager) killContainer(ctx context.Context, pod *corev1.Pod, c *runtime.Container, spec *corev1.Container, grace time.Duration) error {
	start := m.clock.Now()
	if h := spec.GetLifecycle().GetPreStop(); h != nil && c.State == runtime.ContainerRunning && pod != nil {
		hctx, cancel := context.WithTimeout(ctx, grace)
		var ips []string
		for _, ip := range pod.GetStatus().GetPodIps() {
			ips = append(ips, ip.GetIp())
		}
		if msg, err := m.runHook(hctx, pod, spec, c.ID, ips, h, grace); err != nil {
			m.recorder.Eventf(pod, events.ContainerPath(c.Name, c.Init), events.Warning, "FailedPreStopHook", "PreStopHook failed: %s", msg)
		}
		cancel()
	}
	remaining := max(grace-m.clock.Since(start), minGracePeriod)
	if err := m.runtime.StopContainer(ctx, c.ID, remaining); err != nil {
		return fmt.Errorf("stop container %s: %w", c.Name, err)
	}
	return nil
}

// runHook runs a lifecycle handler (exec, httpGet, tcpSocket, sleep).
func (m *Manager) runHook(ctx context.Context, pod *corev1.Pod, c *corev1.Container, id string, podIPs []string, h *corev1.LifecycleHandler, timeout time.Duration) (string, error) {
	switch {
	case h.GetExec() != nil:
		res, err := m.runtime.ExecSync(ctx, id, h.GetExec().GetCommand(), timeout)
		if err != nil {
			return err.Error(), err
		}
		if res.ExitCode != 0 {
			msg := fmt.Sprintf("command %q exited with %d: %s", h.GetExec().GetCommand(), res.ExitCode, res.Stdout)
			return msg, errors.New(msg)
		}
		return "", nil
	case h.GetHttpGet() != nil:
		a := h.GetHttpGet()
		port, err := probes.ResolvePort(a.GetPort(), c)
		if err != nil {
			return err.Error(), err
		}
		host := a.GetHost()
		if host == "" && len(podIPs) > 0 {
			host = podIPs[0]
		}
		scheme := "http"
		if a.GetScheme() == "HTTPS" {
			scheme = "https"
		}
		url := scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port)) + a.GetPath()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err.Error(), err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err.Error(), err
		}
		resp.Body.Close()
		if resp.StatusCode >= 400 {
			msg := fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: received status %d", a.GetPath(), c.GetName(), FormatPod(pod), resp.StatusCode)
			return msg, errors.New(msg)
		}
		return "", nil
	case h.GetSleep() != nil:
		t := m.clock.NewTimer(time.Duration(h.GetSleep().GetSeconds()) * time.Second)
		defer t.Stop()
		select {
		case <-t.C():
		case <-ctx.Done():
		}
		return "", nil
	case h.GetTcpSocket() != nil:
		return "", nil // deprecated and a no-op in Kubernetes
	}
	return "", nil
}

// RemovePod deletes every container and sandbox of a pod (they are
// stopped already) and its logs.
func (m *Manager) RemovePod(ctx context.Context, st *PodStatus, logDir string) error {
	var errs []error
	for _, c := range st.Containers {
		if err := m.runtime.RemoveContainer(ctx, c.ID); err != nil {
			errs = append(errs, err)
		}
	}
	for _, sb := range st.Sandboxes {
		if err := m.stopSandbox(ctx, sb); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := m.runtime.RemovePodSandbox(ctx, sb.ID); err != nil {
			errs = append(errs, err)
		}
	}
	if logDir != "" && len(errs) == 0 {
		_ = os.RemoveAll(logDir)
	}
	m.Reasons.Forget(st.UID)
	return errors.Join(errs...)
}
