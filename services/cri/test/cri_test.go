package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"podline.dev/pkg/testenv"
)

// runPod runs a sandbox and returns its ID.
func (n *node) runPod(cfg *runtimeapi.PodSandboxConfig) string {
	n.t.Helper()
	resp, err := n.rt.RunPodSandbox(n.ctx(), &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		n.t.Fatalf("RunPodSandbox: %v", err)
	}
	return resp.PodSandboxId
}

// runContainer creates and starts a container and returns its ID.
func (n *node) runContainer(sb string, sbCfg *runtimeapi.PodSandboxConfig, cfg *runtimeapi.ContainerConfig) string {
	n.t.Helper()
	resp, err := n.rt.CreateContainer(n.ctx(), &runtimeapi.CreateContainerRequest{PodSandboxId: sb, Config: cfg, SandboxConfig: sbCfg})
	if err != nil {
		n.t.Fatalf("CreateContainer %s: %v", cfg.Metadata.Name, err)
	}
	if _, err := n.rt.StartContainer(n.ctx(), &runtimeapi.StartContainerRequest{ContainerId: resp.ContainerId}); err != nil {
		n.t.Fatalf("StartContainer %s: %v", cfg.Metadata.Name, err)
	}
	return resp.ContainerId
}

// exec runs cmd in a container and returns its stdout, failing on a
// non-zero exit.
func (n *node) exec(id string, cmd ...string) string {
	n.t.Helper()
	out, code := n.execCode(id, cmd...)
	if code != 0 {
		n.t.Fatalf("exec %q exited %d: %s", cmd, code, out)
	}
	return out
}

func (n *node) execCode(id string, cmd ...string) (string, int32) {
	n.t.Helper()
	resp, err := n.rt.ExecSync(n.ctx(), &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: 30})
	if err != nil {
		n.t.Fatalf("ExecSync %q: %v", cmd, err)
	}
	return string(resp.Stdout) + string(resp.Stderr), resp.ExitCode
}

func (n *node) containerStatus(id string) *runtimeapi.ContainerStatus {
	n.t.Helper()
	resp, err := n.rt.ContainerStatus(n.ctx(), &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		n.t.Fatalf("ContainerStatus: %v", err)
	}
	return resp.Status
}

func TestVersionAndStatusReportPodlineCRIReady(t *testing.T) {
	n := startNode(t)
	v, err := n.rt.Version(n.ctx(), &runtimeapi.VersionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if v.RuntimeName != "podline-cri" || v.RuntimeApiVersion != "v1" {
		t.Fatalf("version %+v", v)
	}
	st, err := n.rt.Status(n.ctx(), &runtimeapi.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range st.Status.Conditions {
		if !c.Status {
			t.Fatalf("condition %s is false: %s %s", c.Type, c.Reason, c.Message)
		}
	}
	if len(st.Status.Conditions) != 2 {
		t.Fatalf("conditions %v", st.Status.Conditions)
	}
	fs, err := n.img.ImageFsInfo(n.ctx(), &runtimeapi.ImageFsInfoRequest{})
	if err != nil || len(fs.ImageFilesystems) != 1 || fs.ImageFilesystems[0].UsedBytes.GetValue() == 0 {
		t.Fatalf("ImageFsInfo %v, %v", fs, err)
	}
}

// TestSandboxAndContainerLifecycle goes through what crictl runp, create,
// start, exec, logs, stop and rm do.
func TestSandboxAndContainerLifecycle(t *testing.T) {
	n := startNode(t)
	logDir := filepath.Join(n.dir, "pods", "default_web_uid-web")
	sbCfg := makeSandbox("web", logDir).
		dns([]string{"10.96.0.10"}, []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local"}, []string{"ndots:5"}).
		obj()
	sb := n.runPod(sbCfg)

	st, err := n.rt.PodSandboxStatus(n.ctx(), &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status.State != runtimeapi.PodSandboxState_SANDBOX_READY || !strings.HasPrefix(st.Status.GetNetwork().GetIp(), "10.244.99.") {
		t.Fatalf("sandbox status: state %s, network %v", st.Status.State, st.Status.Network)
	}
	if st.Status.Labels["io.kubernetes.pod.name"] != "web" || st.Status.Annotations["podline.dev/test"] != "yes" {
		t.Fatalf("sandbox labels %v annotations %v", st.Status.Labels, st.Status.Annotations)
	}
	podIP := st.Status.Network.Ip

	id := n.runContainer(sb, sbCfg, makeContainer("app", "sh", "-c", "trap '' TERM; echo hello; echo oops >&2; exec sleep 3600").
		env("GREETING", "hi there").workingDir("/tmp").obj())
	if s := n.containerStatus(id); s.State != runtimeapi.ContainerState_CONTAINER_RUNNING || s.StartedAt == 0 {
		t.Fatalf("container status %s started %d", s.State, s.StartedAt)
	}

	cases := []struct {
		name string
		cmd  []string
		want string
	}{
		{"resolv.conf is the sandbox's DNS config",
			[]string{"cat", "/etc/resolv.conf"},
			"search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"},
		{"the hostname is the sandbox's", []string{"hostname"}, "web\n"},
		{"/etc/hostname is the sandbox's", []string{"cat", "/etc/hostname"}, "web\n"},
		{"/etc/hosts names the pod IP", []string{"sh", "-c", "grep -w web /etc/hosts"}, podIP + "\tweb\n"},
		{"env reaches the process", []string{"sh", "-c", "echo \"$GREETING\""}, "hi there\n"},
		{"the working dir is set", []string{"pwd"}, "/tmp\n"},
		{"unprivileged ports start at 0", []string{"cat", "/proc/sys/net/ipv4/ip_unprivileged_port_start"}, "0\n"},
		{"every group may ping", []string{"cat", "/proc/sys/net/ipv4/ping_group_range"}, "0\t2147483647\n"},
		{"eth0 has the pod IP", []string{"sh", "-c", "ip -4 -o addr show eth0 | awk '{print $4}' | cut -d/ -f1"}, podIP + "\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := n.exec(id, tc.cmd...); got != tc.want {
				t.Fatalf("%q printed %q, want %q", tc.cmd, got, tc.want)
			}
		})
	}
	if out, code := n.execCode(id, "sh", "-c", "exit 3"); code != 3 {
		t.Fatalf("exit 3: code %d (%s)", code, out)
	}

	logPath := filepath.Join(logDir, "app", "0.log")
	testenv.Eventually(t, 30*time.Second, "the container's CRI log", func() error {
		b, err := os.ReadFile(logPath)
		if err != nil {
			return err
		}
		for _, want := range []string{" stdout F hello\n", " stderr F oops\n"} {
			if !strings.Contains(string(b), want) {
				return fmt.Errorf("log %q lacks %q", b, want)
			}
		}
		line := strings.SplitN(string(b), " ", 2)[0]
		if _, err := time.Parse(time.RFC3339Nano, line); err != nil {
			return fmt.Errorf("log timestamp %q: %v", line, err)
		}
		return nil
	})
	if s := n.containerStatus(id); s.LogPath != logPath {
		t.Fatalf("log path %q, want %q", s.LogPath, logPath)
	}

	// Filters, as crictl ps and pods use them.
	l, err := n.rt.ListContainers(n.ctx(), &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		PodSandboxId: sb[:12], LabelSelector: map[string]string{"io.kubernetes.container.name": "app"},
		State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
	}})
	if err != nil || len(l.Containers) != 1 || l.Containers[0].Id != id {
		t.Fatalf("ListContainers by sandbox prefix, label and state: %v, %v", l, err)
	}
	pl, err := n.rt.ListPodSandbox(n.ctx(), &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{"io.kubernetes.pod.name": "web"}}})
	if err != nil || len(pl.Items) != 1 || pl.Items[0].Id != sb {
		t.Fatalf("ListPodSandbox by label: %v, %v", pl, err)
	}

	// sleep as PID 1 ignores SIGTERM: the stop ends in SIGKILL.
	start := time.Now()
	if _, err := n.rt.StopContainer(n.ctx(), &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 1}); err != nil {
		t.Fatal(err)
	}
	s := n.containerStatus(id)
	if s.State != runtimeapi.ContainerState_CONTAINER_EXITED || s.ExitCode != 137 || s.FinishedAt == 0 || s.Reason != "Error" {
		t.Fatalf("stopped container: state %s exit %d reason %q finished %d", s.State, s.ExitCode, s.Reason, s.FinishedAt)
	}
	if time.Since(start) < time.Second {
		t.Fatalf("stop took %s, less than its SIGTERM timeout", time.Since(start))
	}
	if _, err := n.rt.RemoveContainer(n.ctx(), &runtimeapi.RemoveContainerRequest{ContainerId: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.rt.ContainerStatus(n.ctx(), &runtimeapi.ContainerStatusRequest{ContainerId: id}); status.Code(err) != codes.NotFound {
		t.Fatalf("status of a removed container: %v", err)
	}
	if _, err := n.rt.StopPodSandbox(n.ctx(), &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb}); err != nil {
		t.Fatal(err)
	}
	st, err = n.rt.PodSandboxStatus(n.ctx(), &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb})
	if err != nil || st.Status.State != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
		t.Fatalf("stopped sandbox: %v, %v", st, err)
	}
	if _, err := n.rt.RemovePodSandbox(n.ctx(), &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb}); err != nil {
		t.Fatal(err)
	}
	pl, err = n.rt.ListPodSandbox(n.ctx(), &runtimeapi.ListPodSandboxRequest{})
	if err != nil || len(pl.Items) != 0 {
		t.Fatalf("sandboxes after removal: %v, %v", pl, err)
	}
}

func TestAContainerThatExitsReportsItsCodeAndReason(t *testing.T) {
	n := startNode(t)
	sbCfg := makeSandbox("job", filepath.Join(n.dir, "pods", "job")).obj()
	sb := n.runPod(sbCfg)
	ok := n.runContainer(sb, sbCfg, makeContainer("ok", "true").obj())
	bad := n.runContainer(sb, sbCfg, makeContainer("bad", "sh", "-c", "exit 7").obj())
	for id, want := range map[string]struct {
		code   int32
		reason string
	}{ok: {0, "Completed"}, bad: {7, "Error"}} {
		testenv.Eventually(t, 30*time.Second, "the container's exit", func() error {
			s := n.containerStatus(id)
			if s.State != runtimeapi.ContainerState_CONTAINER_EXITED {
				return fmt.Errorf("state %s", s.State)
			}
			if s.ExitCode != want.code || s.Reason != want.reason {
				return fmt.Errorf("exit %d %q, want %d %q", s.ExitCode, s.Reason, want.code, want.reason)
			}
			return nil
		})
	}
}

// TestSecurityContextIsEnforcedInsideTheContainer checks each field from
// inside: id, CapEff, NoNewPrivs, Seccomp, and a write to /.
func TestSecurityContextIsEnforcedInsideTheContainer(t *testing.T) {
	n := startNode(t)
	sbCfg := makeSandbox("secure", filepath.Join(n.dir, "pods", "secure")).obj()
	sb := n.runPod(sbCfg)
	locked := n.runContainer(sb, sbCfg, makeContainer("locked", "sleep", "3600").
		user(1000, 1000).supplementalGroups(4000).caps(nil, []string{"ALL"}).readOnlyRoot().noNewPrivs().
		seccomp(runtimeapi.SecurityProfile_RuntimeDefault).obj())
	open := n.runContainer(sb, sbCfg, makeContainer("open", "sleep", "3600").
		caps([]string{"NET_ADMIN"}, []string{"KILL"}).seccomp(runtimeapi.SecurityProfile_Unconfined).obj())

	procStatus := func(id, field string) string {
		return strings.TrimSpace(n.exec(id, "sh", "-c", "grep '^"+field+":' /proc/self/status | cut -f2"))
	}
	if got := strings.TrimSpace(n.exec(locked, "id")); got != "uid=1000(user) gid=1000(user) groups=1000(user),3000(extra),4000" {
		t.Errorf("id as runAsUser 1000: %q", got)
	}
	if got := procStatus(locked, "CapEff"); got != "0000000000000000" {
		t.Errorf("CapEff with drop ALL: %s", got)
	}
	if got := procStatus(locked, "NoNewPrivs"); got != "1" {
		t.Errorf("NoNewPrivs with allowPrivilegeEscalation=false: %s", got)
	}
	if got := procStatus(locked, "Seccomp"); got != "2" {
		t.Errorf("Seccomp with RuntimeDefault: %s (2 is filter mode)", got)
	}
	if out, code := n.execCode(locked, "touch", "/written"); code == 0 {
		t.Errorf("a write to / of a read-only root succeeded: %s", out)
	} else if !strings.Contains(out, "Read-only file system") {
		t.Errorf("a write to / failed otherwise: %s", out)
	}

	if got := strings.TrimSpace(n.exec(open, "id", "-u")); got != "0" {
		t.Errorf("id -u of the image's user: %s", got)
	}
	// The default set, with NET_ADMIN (bit 12) added and KILL (bit 5)
	// dropped: 0xa80425fb - 0x20 + 0x1000.
	if got := procStatus(open, "CapEff"); got != "00000000a80435db" {
		t.Errorf("CapEff with add NET_ADMIN, drop KILL: %s", got)
	}
	if got := procStatus(open, "Seccomp"); got != "0" {
		t.Errorf("Seccomp with Unconfined: %s", got)
	}
	if got := procStatus(open, "NoNewPrivs"); got != "0" {
		t.Errorf("NoNewPrivs by default: %s", got)
	}
	n.exec(open, "touch", "/written")

	_, err := n.rt.CreateContainer(n.ctx(), &runtimeapi.CreateContainerRequest{PodSandboxId: sb, SandboxConfig: sbCfg,
		Config: makeContainer("priv", "sleep", "3600").privileged().obj()})
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("a privileged container without --allow-privileged: %v", err)
	}
}

// TestContainersSurviveARestartOfTheRuntime restarts podline-cri under a
// running container: same ID, still running, exec and logs still work.
func TestContainersSurviveARestartOfTheRuntime(t *testing.T) {
	n := startNode(t)
	logDir := filepath.Join(n.dir, "pods", "survivor")
	sbCfg := makeSandbox("survivor", logDir).obj()
	sb := n.runPod(sbCfg)
	id := n.runContainer(sb, sbCfg, makeContainer("app", "sh", "-c", "i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.2; done").obj())
	st, _ := n.rt.PodSandboxStatus(n.ctx(), &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb})
	ip := st.GetStatus().GetNetwork().GetIp()

	n.restart()

	s := n.containerStatus(id)
	if s.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("after a restart the container is %s", s.State)
	}
	st, err := n.rt.PodSandboxStatus(n.ctx(), &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb})
	if err != nil || st.Status.State != runtimeapi.PodSandboxState_SANDBOX_READY || st.Status.Network.GetIp() != ip {
		t.Fatalf("after a restart the sandbox: %v, %v (IP was %s)", st, err, ip)
	}
	n.exec(id, "true")
	logPath := filepath.Join(logDir, "app", "0.log")
	size := func() int64 {
		fi, err := os.Stat(logPath)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	before := size()
	testenv.Eventually(t, 30*time.Second, "log lines written after the restart", func() error {
		if size() <= before {
			return fmt.Errorf("log still %d bytes", before)
		}
		return nil
	})
	// The log is reopened after a rotation.
	if err := os.Rename(logPath, logPath+".1"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.rt.ReopenContainerLog(n.ctx(), &runtimeapi.ReopenContainerLogRequest{ContainerId: id}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "a new log file after ReopenContainerLog", func() error {
		if size() == 0 {
			return fmt.Errorf("no new log at %s", logPath)
		}
		return nil
	})
}

func TestImageServiceListsStatusesAndRemoves(t *testing.T) {
	n := startNode(t)
	l, err := n.img.ListImages(n.ctx(), &runtimeapi.ListImagesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var found *runtimeapi.Image
	for _, i := range l.Images {
		for _, tag := range i.RepoTags {
			if tag == busyboxImage {
				found = i
			}
		}
	}
	if found == nil || found.Size == 0 || !strings.HasPrefix(found.Id, "sha256:") {
		t.Fatalf("busybox in ListImages: %v", l.Images)
	}
	st, err := n.img.ImageStatus(n.ctx(), &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: found.Id}})
	if err != nil || st.Image == nil || st.Image.Id != found.Id {
		t.Fatalf("ImageStatus by ID: %v, %v", st, err)
	}
	st, err = n.img.ImageStatus(n.ctx(), &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: "podline.test/absent:1"}})
	if err != nil || st.Image != nil {
		t.Fatalf("ImageStatus of an absent image: %v, %v", st, err)
	}
	// An image of two names: removing it by one removes both.
	files, err := busyboxFiles()
	if err != nil {
		t.Fatal(err)
	}
	if err := importImage(n.ctx(), n.env.client, testImage{name: "podline.test/removable:1", cmd: []string{"sh"},
		files: withMarker(files, "removable")}, "podline.test/removable:2"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.img.RemoveImage(n.ctx(), &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: "podline.test/removable:1"}}); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"podline.test/removable:1", "podline.test/removable:2"} {
		st, err := n.img.ImageStatus(n.ctx(), &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
		if err != nil || st.Image != nil {
			t.Fatalf("%s after RemoveImage: %v, %v", ref, st, err)
		}
	}
	if st, err := n.img.ImageStatus(n.ctx(), &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: busyboxImage}}); err != nil || st.Image == nil {
		t.Fatalf("another image went with it: %v, %v", st, err)
	}
	if _, err := n.img.PullImage(n.ctx(), &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "127.0.0.1:1/none:1"}}); err == nil {
		t.Fatal("a pull from nowhere succeeded")
	}
}
