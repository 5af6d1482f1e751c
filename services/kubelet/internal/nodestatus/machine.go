package nodestatus

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"podline.dev/services/kubelet/internal/resource"
)

// DefaultMaxPods is Kubernetes' default pod capacity.
const DefaultMaxPods = 110

// cgroupPaths maps each v1 controller (and "" for v2) to this process's
// cgroup path, from /proc/self/cgroup.
func cgroupPaths() map[string]string {
	out := map[string]string{}
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, ctrl := range strings.Split(parts[1], ",") {
			out[ctrl] = parts[2]
		}
	}
	return out
}

func readInt(path string) (int64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(data))
	if s == "max" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// cgroupFile finds a controller's file for this process's cgroup, walking
// up to the root for the tightest limit a parent sets.
func cgroupLimit(root, ctrl, rel, file string, pick func(int64) bool) (int64, bool) {
	dir := filepath.Join(root, ctrl, rel)
	best, found := int64(0), false
	for {
		if v, ok := readInt(filepath.Join(dir, file)); ok && pick(v) && (!found || v < best) {
			best, found = v, true
		}
		if dir == filepath.Join(root, ctrl) || dir == "/" || dir == "." {
			break
		}
		dir = filepath.Dir(dir)
	}
	return best, found
}

// memTotal is MemTotal from /proc/meminfo in bytes.
func meminfo(key string) int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == key+":" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n * 1024
		}
	}
	return 0
}

// DetectCapacity reads the node's capacity: CPU and memory from the
// cgroup limits of the kubelet's container where it has them (v1 or v2),
// else the machine; ephemeral storage from the root directory's file
// system; DefaultMaxPods pods.
func DetectCapacity(rootDir string) resource.List {
	paths := cgroupPaths()
	total := meminfo("MemTotal")
	mem := total
	if p, ok := paths["memory"]; ok {
		if v, ok := cgroupLimit("/sys/fs/cgroup", "memory", p, "memory.limit_in_bytes", func(v int64) bool { return v > 0 && v < total }); ok {
			mem = v
		}
	} else if p, ok := paths[""]; ok {
		if v, ok := cgroupLimit("/sys/fs/cgroup", "", p, "memory.max", func(v int64) bool { return v > 0 && v < total }); ok {
			mem = v
		}
	}
	cpu := int64(goruntime.NumCPU()) * 1000
	if p, ok := paths["cpu"]; ok {
		quota, okq := readInt(filepath.Join("/sys/fs/cgroup/cpu", p, "cpu.cfs_quota_us"))
		period, okp := readInt(filepath.Join("/sys/fs/cgroup/cpu", p, "cpu.cfs_period_us"))
		if okq && okp && quota > 0 && period > 0 {
			cpu = min(cpu, quota*1000/period)
		}
	} else if p, ok := paths[""]; ok {
		if data, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", p, "cpu.max")); err == nil {
			f := strings.Fields(string(data))
			if len(f) == 2 && f[0] != "max" {
				q, _ := strconv.ParseInt(f[0], 10, 64)
				per, _ := strconv.ParseInt(f[1], 10, 64)
				if q > 0 && per > 0 {
					cpu = min(cpu, q*1000/per)
				}
			}
		}
	}
	out := resource.List{resource.CPU: cpu, resource.Memory: mem, resource.Pods: DefaultMaxPods}
	var fs unix.Statfs_t
	if err := unix.Statfs(existingParent(rootDir), &fs); err == nil {
		out[resource.EphemeralStorage] = int64(fs.Blocks) * fs.Bsize
	}
	return out
}

func existingParent(p string) string {
	for p != "/" && p != "." {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		p = filepath.Dir(p)
	}
	return p
}

// Signals are what the pressure conditions are decided from.
type Signals struct {
	MemoryAvailable int64
	FsAvailable     int64
	FsCapacity      int64
	PIDsUsed        int64
	PIDsMax         int64
}

// ReadSignals measures the node.
func ReadSignals(rootDir string) Signals {
	s := Signals{MemoryAvailable: meminfo("MemAvailable")}
	if avail, ok := cgroupAvailable("/sys/fs/cgroup/memory", cgroupPaths()["memory"]); ok && avail < s.MemoryAvailable {
		s.MemoryAvailable = avail
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(existingParent(rootDir), &fs); err == nil {
		s.FsAvailable = int64(fs.Bavail) * fs.Bsize
		s.FsCapacity = int64(fs.Blocks) * fs.Bsize
	}
	if max, ok := readInt("/proc/sys/kernel/pid_max"); ok {
		s.PIDsMax = max
	}
	if entries, err := os.ReadDir("/proc"); err == nil {
		for _, e := range entries {
			if _, err := strconv.Atoi(e.Name()); err == nil {
				s.PIDsUsed++
			}
		}
	}
	return s
}

// cgroupAvailable is the memory the kubelet's cgroup has left under its
// limit, as Kubernetes reckons memory.available: the limit less the working
// set (usage less the inactive page cache, which the kernel reclaims
// before it runs short). ok is false for a cgroup without a limit (the
// host's root cgroup, or an unlimited container), where /proc/meminfo's
// MemAvailable is the measure.
func cgroupAvailable(memoryRoot, cgroup string) (int64, bool) {
	if cgroup == "" {
		return 0, false
	}
	dir := filepath.Join(memoryRoot, cgroup)
	limit, ok := readInt(filepath.Join(dir, "memory.limit_in_bytes"))
	if !ok || limit >= unlimitedMemory {
		return 0, false
	}
	usage, ok := readInt(filepath.Join(dir, "memory.usage_in_bytes"))
	if !ok {
		return 0, false
	}
	if data, err := os.ReadFile(filepath.Join(dir, "memory.stat")); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "total_inactive_file "); ok {
				if inactive, err := strconv.ParseInt(v, 10, 64); err == nil && inactive < usage {
					usage -= inactive
				}
			}
		}
	}
	return limit - usage, true
}

// unlimitedMemory: cgroup v1 writes "no limit" as the largest page-aligned
// int64; anything this large is no limit.
const unlimitedMemory = 1 << 62

// Pressure applies Kubernetes' default hard eviction thresholds:
// memory.available < 100Mi, nodefs.available < 10%, pid.available < 10%.
func (s Signals) Pressure() (memory, disk, pid bool) {
	memory = s.MemoryAvailable > 0 && s.MemoryAvailable < 100<<20
	disk = s.FsCapacity > 0 && s.FsAvailable*10 < s.FsCapacity
	pid = s.PIDsMax > 0 && (s.PIDsMax-s.PIDsUsed)*10 < s.PIDsMax
	return memory, disk, pid
}
