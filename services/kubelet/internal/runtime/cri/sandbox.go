package cri

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"

	"podline.dev/services/kubelet/internal/runtime"
)

// sandboxConfig is CRI's PodSandboxConfig of the kubelet's.
func sandboxConfig(cfg *runtime.SandboxConfig) *criv1.PodSandboxConfig {
	labels := maps.Clone(cfg.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[runtime.LabelPodUID] = cfg.Pod.UID
	labels[runtime.LabelPodName] = cfg.Pod.Name
	labels[runtime.LabelPodNamespace] = cfg.Pod.Namespace
	if cfg.HostNetwork {
		labels[runtime.LabelHostNetwork] = "true"
	}
	c := &criv1.PodSandboxConfig{
		Metadata:     &criv1.PodSandboxMetadata{Name: cfg.Pod.Name, Uid: cfg.Pod.UID, Namespace: cfg.Pod.Namespace, Attempt: uint32(cfg.Attempt)},
		Hostname:     cfg.Hostname,
		LogDirectory: cfg.LogDir,
		Labels:       labels,
		Annotations:  maps.Clone(cfg.Annotations),
		Linux: &criv1.LinuxPodSandboxConfig{
			CgroupParent: cfg.CgroupParent,
			SecurityContext: &criv1.LinuxSandboxSecurityContext{
				NamespaceOptions: namespaceOptions(cfg.HostNetwork),
			},
		},
	}
	if d := cfg.DNS; d != nil {
		c.DnsConfig = &criv1.DNSConfig{Servers: d.Servers, Searches: d.Searches, Options: d.Options}
	}
	for _, p := range cfg.Ports {
		c.PortMappings = append(c.PortMappings, &criv1.PortMapping{
			Protocol: protocol(p.Protocol), ContainerPort: p.ContainerPort, HostPort: p.HostPort, HostIp: p.HostIP,
		})
	}
	return c
}

func namespaceOptions(hostNetwork bool) *criv1.NamespaceOption {
	o := &criv1.NamespaceOption{Network: criv1.NamespaceMode_POD, Pid: criv1.NamespaceMode_CONTAINER, Ipc: criv1.NamespaceMode_POD}
	if hostNetwork {
		o.Network = criv1.NamespaceMode_NODE
	}
	return o
}

func protocol(p string) criv1.Protocol {
	switch strings.ToUpper(p) {
	case "UDP":
		return criv1.Protocol_UDP
	case "SCTP":
		return criv1.Protocol_SCTP
	}
	return criv1.Protocol_TCP
}

// RunPodSandbox runs the sandbox (the runtime attaches it to the pod
// network) and reads its IPs from PodSandboxStatus.
func (r *Runtime) RunPodSandbox(ctx context.Context, cfg *runtime.SandboxConfig) (*runtime.Sandbox, error) {
	resp, err := r.rt.RunPodSandbox(ctx, &criv1.RunPodSandboxRequest{Config: sandboxConfig(cfg)})
	if err != nil {
		return nil, wrap(err, "run pod sandbox")
	}
	id := resp.GetPodSandboxId()
	st, err := r.rt.PodSandboxStatus(ctx, &criv1.PodSandboxStatusRequest{PodSandboxId: id})
	if err != nil {
		return nil, wrap(err, "pod sandbox status "+id)
	}
	sb := fromSandboxStatus(st.GetStatus())
	r.mu.Lock()
	r.sandboxIPs[id] = sb.IPs
	r.mu.Unlock()
	return sb, nil
}

func fromSandboxStatus(s *criv1.PodSandboxStatus) *runtime.Sandbox {
	sb := &runtime.Sandbox{
		ID:          s.GetId(),
		Pod:         podRef(s.GetMetadata()),
		State:       sandboxState(s.GetState()),
		CreatedAt:   time.Unix(0, s.GetCreatedAt()),
		Attempt:     int(s.GetMetadata().GetAttempt()),
		HostNetwork: s.GetLinux().GetNamespaces().GetOptions().GetNetwork() == criv1.NamespaceMode_NODE || s.GetLabels()[runtime.LabelHostNetwork] == "true",
	}
	if !sb.HostNetwork {
		sb.IPs = sandboxIPs(s.GetNetwork())
	}
	return sb
}

func sandboxIPs(n *criv1.PodSandboxNetworkStatus) []string {
	var ips []string
	if ip := n.GetIp(); ip != "" {
		ips = append(ips, ip)
	}
	for _, a := range n.GetAdditionalIps() {
		if a.GetIp() != "" && !slices.Contains(ips, a.GetIp()) {
			ips = append(ips, a.GetIp())
		}
	}
	return ips
}

func podRef(m *criv1.PodSandboxMetadata) runtime.PodRef {
	return runtime.PodRef{UID: m.GetUid(), Name: m.GetName(), Namespace: m.GetNamespace()}
}

func sandboxState(s criv1.PodSandboxState) runtime.SandboxState {
	if s == criv1.PodSandboxState_SANDBOX_READY {
		return runtime.SandboxReady
	}
	return runtime.SandboxNotReady
}

func (r *Runtime) StopPodSandbox(ctx context.Context, id string) error {
	_, err := r.rt.StopPodSandbox(ctx, &criv1.StopPodSandboxRequest{PodSandboxId: id})
	if notFound(err) {
		return nil
	}
	return wrap(err, "stop pod sandbox "+id)
}

func (r *Runtime) RemovePodSandbox(ctx context.Context, id string) error {
	_, err := r.rt.RemovePodSandbox(ctx, &criv1.RemovePodSandboxRequest{PodSandboxId: id})
	if err != nil && !notFound(err) {
		return wrap(err, "remove pod sandbox "+id)
	}
	r.mu.Lock()
	delete(r.sandboxIPs, id)
	r.mu.Unlock()
	return nil
}

// ListPodSandboxes lists the sandboxes the kubelet made (they carry the
// pod UID label), with the IPs of ready ones from PodSandboxStatus
// (cached: a sandbox keeps its addresses).
func (r *Runtime) ListPodSandboxes(ctx context.Context, podUID string) ([]*runtime.Sandbox, error) {
	sel := map[string]string{}
	if podUID != "" {
		sel[runtime.LabelPodUID] = podUID
	}
	resp, err := r.rt.ListPodSandbox(ctx, &criv1.ListPodSandboxRequest{Filter: &criv1.PodSandboxFilter{LabelSelector: sel}})
	if err != nil {
		return nil, wrap(err, "list pod sandboxes")
	}
	var out []*runtime.Sandbox
	for _, s := range resp.GetItems() {
		if _, ok := s.GetLabels()[runtime.LabelPodUID]; !ok {
			continue // not the kubelet's
		}
		sb := &runtime.Sandbox{
			ID: s.GetId(), Pod: podRef(s.GetMetadata()), State: sandboxState(s.GetState()),
			CreatedAt: time.Unix(0, s.GetCreatedAt()), Attempt: int(s.GetMetadata().GetAttempt()),
			HostNetwork: s.GetLabels()[runtime.LabelHostNetwork] == "true",
		}
		if !sb.HostNetwork && sb.State == runtime.SandboxReady {
			r.mu.Lock()
			ips, ok := r.sandboxIPs[sb.ID]
			r.mu.Unlock()
			if !ok {
				st, err := r.rt.PodSandboxStatus(ctx, &criv1.PodSandboxStatusRequest{PodSandboxId: sb.ID})
				if notFound(err) {
					continue
				}
				if err != nil {
					return nil, wrap(err, "pod sandbox status "+sb.ID)
				}
				ips = sandboxIPs(st.GetStatus().GetNetwork())
				r.mu.Lock()
				r.sandboxIPs[sb.ID] = ips
				r.mu.Unlock()
			}
			sb.IPs = slices.Clone(ips)
		}
		out = append(out, sb)
	}
	if podUID == "" { // a full list: forget sandboxes removed behind our back
		seen := map[string]bool{}
		for _, s := range resp.GetItems() {
			seen[s.GetId()] = true
		}
		r.mu.Lock()
		for id := range r.sandboxIPs {
			if !seen[id] {
				delete(r.sandboxIPs, id)
			}
		}
		r.mu.Unlock()
	}
	return out, nil
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
