package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"podline.dev/pkg/apierrors"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/kubelet/internal/runtime"
)

// shimDaemons lists the runc shim daemons serving this containerd: PID to
// the -id each was started with (the task that started its group). The
// short-lived `containerd-shim-runc-v2 ... start` and `... delete` runs
// containerd makes for every task are not daemons and are left out.
func (s *sharedContainerd) shimDaemons() map[int]string {
	out := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		args := strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
		if filepath.Base(args[0]) != "containerd-shim-runc-v2" {
			continue
		}
		if last := args[len(args)-1]; last == "start" || last == "delete" {
			continue
		}
		var id, address string
		for i := 1; i+1 < len(args); i++ {
			switch args[i] {
			case "-id":
				id = args[i+1]
			case "-address":
				address = args[i+1]
			}
		}
		if address == s.socket {
			out[pid] = id
		}
	}
	// A shim's child between fork and exec (about to run runc) still shows
	// the shim's command line: it is not a shim of its own.
	for pid := range out {
		if parent, err := parentPID(uint32(pid)); err == nil {
			if _, ok := out[parent]; ok {
				delete(out, pid)
			}
		}
	}
	return out
}

// parentPID reads a process's parent from /proc/<pid>/stat, whose second
// field (the command) may hold spaces but ends at the last ')'.
func parentPID(pid uint32) (int, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 2 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	return strconv.Atoi(fields[1])
}

// A pod's sandbox, init containers and containers all run under one runc
// shim, the one its sandbox started, and that shim exits with the pod.
func TestContainerdPodRunsUnderOneShim(t *testing.T) {
	n := startRealNode(t)
	ctx := ctxFor(t, 2*time.Minute)
	before := n.ctrd.shimDaemons()

	// Record every shim that starts while the pod comes up: an init
	// container with a shim of its own would show one for the second it
	// sleeps, and would be gone by the time the pod runs.
	var (
		mu   sync.Mutex
		seen = map[int]string{}
	)
	stop, polled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(polled)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			for pid, id := range n.ctrd.shimDaemons() {
				if _, old := before[pid]; !old {
					mu.Lock()
					seen[pid] = id
					mu.Unlock()
				}
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	pod := makePod("grouped").node(n.name).
		initContainer("init", webImage, "sleep", "1").
		container("web", webImage).port(8080).obj()
	if _, err := n.pods.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, n.pods, "grouped", 60*time.Second, "Running", func(p *corev1.Pod) bool {
		cs := p.GetStatus().GetContainerStatuses()
		return len(cs) == 1 && cs[0].GetState().GetRunning() != nil
	})
	close(stop)
	<-polled

	sbs, err := n.ctrd.client.Containers(ctx, fmt.Sprintf(`labels.%q==%s,labels.%q==%s`,
		runtime.LabelPodUID, p.GetMetadata().GetUid(), criKindLabel, "sandbox"))
	if err != nil || len(sbs) != 1 {
		t.Fatalf("sandboxes of the pod: %d, %v", len(sbs), err)
	}
	sandboxID := sbs[0].ID()
	initID := strings.TrimPrefix(p.GetStatus().GetInitContainerStatuses()[0].GetContainerId(), "containerd://")
	webID := strings.TrimPrefix(p.GetStatus().GetContainerStatuses()[0].GetContainerId(), "containerd://")
	if initID == "" || webID == "" {
		t.Fatalf("container IDs missing: %s", describe(p))
	}
	if len(seen) != 1 {
		t.Fatalf("shims started for the pod (pid: -id) %v, want one started by sandbox %s (init %s, web %s)", seen, sandboxID, initID, webID)
	}
	var shimPID int
	for pid, id := range seen {
		if id != sandboxID {
			t.Fatalf("the pod's shim %d was started for %s, want the sandbox %s", pid, id, sandboxID)
		}
		shimPID = pid
	}
	// Both specs name the sandbox as containerd's CRI does, and the shim
	// is the parent (subreaper) of every process it runs.
	for typ, id := range map[string]string{"sandbox": sandboxID, "container": webID} {
		c, err := n.ctrd.client.LoadContainer(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := c.Spec(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if a := spec.Annotations; a["io.kubernetes.cri.sandbox-id"] != sandboxID || a["io.kubernetes.cri.container-type"] != typ {
			t.Fatalf("%s %s has annotations %v, want sandbox-id %s and container-type %s", typ, id, a, sandboxID, typ)
		}
		task, err := c.Task(ctx, nil)
		if err != nil {
			t.Fatalf("%s task: %v", typ, err)
		}
		if ppid, err := parentPID(task.Pid()); err != nil || ppid != shimPID {
			t.Fatalf("%s (pid %d) has parent %d (%v), want the pod's shim %d", typ, task.Pid(), ppid, err, shimPID)
		}
	}

	if _, err := n.pods.Delete(ctx, "default", "grouped", nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "pod deleted", func() (bool, string) {
		_, err := n.pods.Get(ctx, "default", "grouped")
		return apierrors.IsNotFound(err), ""
	})
	eventually(t, 10*time.Second, "the pod's shim exits", func() (bool, string) {
		left := n.ctrd.shimDaemons()
		if _, ok := left[shimPID]; ok {
			return false, fmt.Sprintf("shim %d still runs", shimPID)
		}
		for pid, id := range left {
			if id == sandboxID || id == initID || id == webID {
				return false, fmt.Sprintf("shim %d of %s still runs", pid, id)
			}
		}
		return true, ""
	})
}
