package server

import (
	"context"
	"time"

	v1 "github.com/containerd/cgroups/v3/cgroup1/stats"
	v2 "github.com/containerd/cgroups/v3/cgroup2/stats"
	"github.com/containerd/typeurl/v2"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"podline.dev/services/cri/internal/filter"
)

// usage is what the kubelet reads of a cgroup: CPU time and the memory
// working set (usage less inactive file pages).
type usage struct {
	cpuNanos   uint64
	workingSet uint64
	memUsage   uint64
	oomKills   uint64
}

// metricsUsage reads a task's cgroup v1 or v2 metrics.
func metricsUsage(data typeurl.Any) (usage, bool) {
	if data == nil {
		return usage{}, false
	}
	m, err := typeurl.UnmarshalAny(data)
	if err != nil {
		return usage{}, false
	}
	var u usage
	switch m := m.(type) {
	case *v1.Metrics:
		u.cpuNanos = m.GetCPU().GetUsage().GetTotal()
		u.memUsage = m.GetMemory().GetUsage().GetUsage()
		if inactive := m.GetMemory().GetTotalInactiveFile(); inactive < u.memUsage {
			u.workingSet = u.memUsage - inactive
		}
		u.oomKills = m.GetMemoryOomControl().GetOomKill()
	case *v2.Metrics:
		u.cpuNanos = m.GetCPU().GetUsageUsec() * 1000
		u.memUsage = m.GetMemory().GetUsage()
		if inactive := m.GetMemory().GetInactiveFile(); inactive < u.memUsage {
			u.workingSet = u.memUsage - inactive
		}
		u.oomKills = m.GetMemoryEvents().GetOomKill()
	default:
		return usage{}, false
	}
	return u, true
}

func oomKillsFromMetrics(data typeurl.Any) uint64 {
	u, _ := metricsUsage(data)
	return u.oomKills
}

// taskUsage reads the usage of a containerd container's running task.
func (s *Service) taskUsage(ctx context.Context, id string) (usage, bool) {
	c, err := s.client.LoadContainer(ctx, id)
	if err != nil {
		return usage{}, false
	}
	task, err := c.Task(ctx, nil)
	if err != nil {
		return usage{}, false
	}
	m, err := task.Metrics(ctx)
	if err != nil {
		return usage{}, false
	}
	return metricsUsage(m.Data)
}

func (s *Service) containerStats(ctx context.Context, c *runtimeapi.Container) *runtimeapi.ContainerStats {
	now := time.Now().UnixNano()
	st := &runtimeapi.ContainerStats{
		Attributes: &runtimeapi.ContainerAttributes{Id: c.Id, Metadata: c.Metadata, Labels: c.Labels, Annotations: c.Annotations},
	}
	if u, ok := s.taskUsage(ctx, c.Id); ok {
		st.Cpu = &runtimeapi.CpuUsage{Timestamp: now, UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: u.cpuNanos}}
		st.Memory = &runtimeapi.MemoryUsage{Timestamp: now,
			WorkingSetBytes: &runtimeapi.UInt64Value{Value: u.workingSet}, UsageBytes: &runtimeapi.UInt64Value{Value: u.memUsage}}
	}
	st.WritableLayer = &runtimeapi.FilesystemUsage{Timestamp: now, FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: s.imageFsDir},
		UsedBytes: &runtimeapi.UInt64Value{}, InodesUsed: &runtimeapi.UInt64Value{}}
	return st
}

// ContainerStats reports one container's CPU and memory.
func (s *Service) ContainerStats(ctx context.Context, req *runtimeapi.ContainerStatsRequest) (*runtimeapi.ContainerStatsResponse, error) {
	c, err := s.store.container(req.GetContainerId())
	if err != nil {
		return nil, toGRPC(err)
	}
	for _, x := range s.listContainers() {
		if x.Id == c.ID {
			return &runtimeapi.ContainerStatsResponse{Stats: s.containerStats(s.ctx(ctx), x)}, nil
		}
	}
	return nil, toGRPC(notFoundf("container %s", c.ID))
}

// ListContainerStats reports the selected running containers' CPU and memory.
func (s *Service) ListContainerStats(ctx context.Context, req *runtimeapi.ListContainerStatsRequest) (*runtimeapi.ListContainerStatsResponse, error) {
	ctx = s.ctx(ctx)
	resp := &runtimeapi.ListContainerStatsResponse{}
	for _, c := range filter.ContainerStats(s.listContainers(), req.GetFilter()) {
		if c.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		resp.Stats = append(resp.Stats, s.containerStats(ctx, c))
	}
	return resp, nil
}

func (s *Service) sandboxStats(ctx context.Context, sb *runtimeapi.PodSandbox) *runtimeapi.PodSandboxStats {
	now := time.Now().UnixNano()
	st := &runtimeapi.PodSandboxStats{
		Attributes: &runtimeapi.PodSandboxAttributes{Id: sb.Id, Metadata: sb.Metadata, Labels: sb.Labels, Annotations: sb.Annotations},
		Linux:      &runtimeapi.LinuxPodSandboxStats{},
	}
	var total usage
	if u, ok := s.taskUsage(ctx, sb.Id); ok {
		total = u
	}
	for _, c := range filter.Containers(s.listContainers(), &runtimeapi.ContainerFilter{PodSandboxId: sb.Id}) {
		if c.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		cs := s.containerStats(ctx, c)
		st.Linux.Containers = append(st.Linux.Containers, cs)
		total.cpuNanos += cs.GetCpu().GetUsageCoreNanoSeconds().GetValue()
		total.workingSet += cs.GetMemory().GetWorkingSetBytes().GetValue()
		total.memUsage += cs.GetMemory().GetUsageBytes().GetValue()
	}
	st.Linux.Cpu = &runtimeapi.CpuUsage{Timestamp: now, UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: total.cpuNanos}}
	st.Linux.Memory = &runtimeapi.MemoryUsage{Timestamp: now,
		WorkingSetBytes: &runtimeapi.UInt64Value{Value: total.workingSet}, UsageBytes: &runtimeapi.UInt64Value{Value: total.memUsage}}
	return st
}

// PodSandboxStats reports a sandbox's CPU and memory with its containers'.
func (s *Service) PodSandboxStats(ctx context.Context, req *runtimeapi.PodSandboxStatsRequest) (*runtimeapi.PodSandboxStatsResponse, error) {
	sb, err := s.store.sandbox(req.GetPodSandboxId())
	if err != nil {
		return nil, toGRPC(err)
	}
	resp, _ := s.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{Id: sb.ID}})
	if len(resp.GetItems()) == 0 {
		return nil, toGRPC(notFoundf("sandbox %s", sb.ID))
	}
	return &runtimeapi.PodSandboxStatsResponse{Stats: s.sandboxStats(s.ctx(ctx), resp.Items[0])}, nil
}

// ListPodSandboxStats reports the selected ready sandboxes.
func (s *Service) ListPodSandboxStats(ctx context.Context, req *runtimeapi.ListPodSandboxStatsRequest) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	list, _ := s.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	out := &runtimeapi.ListPodSandboxStatsResponse{}
	for _, sb := range filter.SandboxStats(list.GetItems(), req.GetFilter()) {
		if sb.State != runtimeapi.PodSandboxState_SANDBOX_READY {
			continue
		}
		out.Stats = append(out.Stats, s.sandboxStats(s.ctx(ctx), sb))
	}
	return out, nil
}
