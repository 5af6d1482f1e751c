package test

import (
	"bytes"
	tasks "github.com/containerd/containerd/api/services/tasks/v1"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"podline.dev/services/kubelet/internal/runtime"
	ctrdrt "podline.dev/services/kubelet/internal/runtime/containerd"
)

// The containerd runtime on its own: a sandbox and a container in it,
// their states, an exec, the recorded exit, and removal.
func TestContainerdRuntimeRunsASandboxAndAContainer(t *testing.T) {
	c := requireContainerd(t)
	dir := t.TempDir()
	t.Cleanup(func() { c.wipe(); unmountUnder(dir) })
	rt, err := ctrdrt.New(c.socket, ctrdrt.WithNetNSDir(filepath.Join(dir, "netns")), ctrdrt.WithFIFODir(filepath.Join(dir, "fifo")),
		ctrdrt.WithCgroupParent("/podline-test-runtime"))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	t.Cleanup(func() { removeCgroups("/podline-test-runtime") })
	ctx := ctxFor(t, time.Minute)
	pod := runtime.PodRef{UID: "uid-1", Name: "p", Namespace: "default"}
	sb, err := rt.RunPodSandbox(ctx, &runtime.SandboxConfig{Pod: pod, Hostname: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.SetSandboxIPs(ctx, sb.ID, []string{"10.0.0.2"}); err != nil {
		t.Fatal(err)
	}
	sbs, err := rt.ListPodSandboxes(ctx, "uid-1")
	if err != nil || len(sbs) != 1 || sbs[0].State != runtime.SandboxReady || strings.Join(sbs[0].IPs, ",") != "10.0.0.2" || sbs[0].NetNSPath == "" {
		for _, s := range sbs {
			t.Logf("sandbox %+v", *s)
		}
		resp, err := c.client.TaskService().List(ctx, &tasks.ListTasksRequest{})
		t.Logf("tasks %v %v", resp, err)
		t.Fatalf("sandboxes %v", err)
	}
	hostFile := filepath.Join(dir, "greeting")
	if err := os.WriteFile(hostFile, []byte("hello from the host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id, err := rt.CreateContainer(ctx, sbs[0], &runtime.ContainerConfig{
		Name: "c", Image: webImage, Command: []string{"sleep", "30"}, LogPath: filepath.Join(dir, "logs", "c", "0.log"),
		Env: []string{"A=b"}, Mounts: []runtime.Mount{{HostPath: hostFile, ContainerPath: "/etc/greeting", ReadOnly: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	cs, err := rt.ListContainers(ctx, "uid-1")
	if err != nil || len(cs) != 1 || cs[0].State != runtime.ContainerRunning || cs[0].StartedAt.IsZero() || !strings.Contains(cs[0].ImageID, "@sha256:") {
		t.Fatalf("containers %+v, %v", cs, err)
	}
	res, err := rt.ExecSync(ctx, id, []string{"echo", "hi"}, 5*time.Second)
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "hi" || res.ExitCode != 0 {
		t.Fatalf("exec: %+v %v", res, err)
	}
	for range 5 {
		res, err = rt.ExecSync(ctx, id, []string{"cat", "/etc/greeting"}, 5*time.Second)
		if err != nil || string(res.Stdout) != "hello from the host\n" {
			t.Fatalf("exec cat: %q %v", res.Stdout, err)
		}
	}
	for range 5 {
		var out bytes.Buffer
		code, err := rt.Exec(ctx, id, runtime.ExecOptions{Cmd: []string{"cat", "/etc/greeting"}, Stdout: &out, Stderr: &out})
		if err != nil || code != 0 || out.String() != "hello from the host\n" {
			t.Fatalf("exec cat with streams: %q %d %v", out.String(), code, err)
		}
	}
	if err := rt.StopContainer(ctx, id, time.Second); err != nil {
		t.Fatal(err)
	}
	cs, _ = rt.ListContainers(ctx, "uid-1")
	if len(cs) != 1 || cs[0].State != runtime.ContainerExited || cs[0].FinishedAt.IsZero() {
		t.Fatalf("after stop %+v", cs)
	}
	if err := rt.RemoveContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := rt.StopPodSandbox(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if err := rt.RemovePodSandbox(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	sbs, _ = rt.ListPodSandboxes(ctx, "uid-1")
	cs, _ = rt.ListContainers(ctx, "uid-1")
	if len(sbs) != 0 || len(cs) != 0 {
		t.Fatalf("left: %v %v", sbs, cs)
	}
}
