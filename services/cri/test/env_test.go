package test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"podline.dev/pkg/testenv"
	"podline.dev/services/cri/internal/daemon"
)

const (
	cniBinDir = "/usr/lib/cni"
	namespace = "podline"
	podCIDR   = "10.244.99.0/24"
	// pauseImage and busyboxImage are imported by the shared env.
	pauseImage   = "docker.io/podline/pause:3.10"
	busyboxImage = "podline.test/busybox:1.36"
)

// shared is one containerd for the package's tests, in the test's own
// network namespace.
type shared struct {
	repo, dir, socket string
	cmd               *exec.Cmd
	log               *os.File
	client            *containerd.Client
}

var (
	sharedOnce sync.Once
	env        *shared
	envSkip    string
	envErr     error
)

// skipReason says why the tests cannot run here, or "".
func skipReason(repo string) string {
	if os.Geteuid() != 0 {
		return "podline-cri integration tests need root (run the tests as root)"
	}
	if os.Getenv(envInNetNS) == "" {
		return "podline-cri integration tests need unshare(1) to run in a network namespace of their own"
	}
	if _, err := exec.LookPath("runc"); err != nil {
		return "podline-cri integration tests need runc in PATH (make cri-test-deps)"
	}
	for _, b := range []string{"containerd", "containerd-shim-runc-v2"} {
		if _, err := os.Stat(filepath.Join(repo, "bin", b)); err != nil {
			return fmt.Sprintf("podline-cri integration tests need bin/%s (make cri-test-deps builds it)", b)
		}
	}
	for _, p := range []string{"bridge", "host-local", "loopback", "portmap"} {
		if _, err := os.Stat(filepath.Join(cniBinDir, p)); err != nil {
			return fmt.Sprintf("podline-cri integration tests need the CNI plugin %s in %s (apt-get install containernetworking-plugins)", p, cniBinDir)
		}
	}
	if _, err := os.Stat(busyboxBinary); err != nil {
		return "podline-cri integration tests need " + busyboxBinary + " (apt-get install busybox-static)"
	}
	return ""
}

// requireEnv starts the shared containerd, or skips the test.
func requireEnv(t testing.TB) *shared {
	t.Helper()
	sharedOnce.Do(func() {
		repo, err := testenv.RepoRoot()
		if err != nil {
			envErr = err
			return
		}
		if envSkip = skipReason(repo); envSkip != "" {
			return
		}
		env, envErr = startShared(repo)
	})
	if envSkip != "" {
		t.Skip(envSkip)
	}
	if envErr != nil {
		t.Fatal(envErr)
	}
	return env
}

func startShared(repo string) (*shared, error) {
	dir, err := os.MkdirTemp("", "podline-cri-test-")
	if err != nil {
		return nil, err
	}
	s := &shared{repo: repo, dir: dir, socket: filepath.Join(dir, "containerd.sock")}
	cfg := fmt.Sprintf(`version = 3
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images",
  "io.containerd.podsandbox.controller.v1.podsandbox", "io.containerd.nri.v1.nri",
  "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = %q
[ttrpc]
  address = %q
[plugins."io.containerd.internal.v1.opt"]
  path = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), s.socket, s.socket+".ttrpc", filepath.Join(dir, "opt"))
	config := filepath.Join(dir, "containerd.toml")
	if err := os.WriteFile(config, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	if s.log, err = os.Create(filepath.Join(dir, "containerd.log")); err != nil {
		return nil, err
	}
	s.cmd = exec.Command(filepath.Join(repo, "bin", "containerd"), "--config", config)
	s.cmd.Env = append(os.Environ(), "PATH="+filepath.Join(repo, "bin")+":"+os.Getenv("PATH"))
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := containerd.New(s.socket, containerd.WithDefaultNamespace(namespace), containerd.WithTimeout(time.Second))
		if err == nil {
			if ok, _ := c.IsServing(context.Background()); ok {
				s.client = c
				break
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			return s, fmt.Errorf("containerd did not start: %v (log %s)", err, s.log.Name())
		}
		time.Sleep(100 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := importImages(ctx, s.client, dir); err != nil {
		return s, err
	}
	return s, nil
}

func stopShared() {
	if env == nil {
		return
	}
	if env.client != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cs, _ := env.client.Containers(ctx)
		for _, c := range cs {
			if task, err := c.Task(ctx, nil); err == nil {
				_, _ = task.Delete(ctx, containerd.WithProcessKill)
			}
			_ = c.Delete(ctx, containerd.WithSnapshotCleanup)
		}
		cancel()
		env.client.Close()
	}
	if env.cmd != nil && env.cmd.Process != nil {
		_ = env.cmd.Process.Signal(syscall.SIGTERM)
		_ = env.cmd.Wait()
	}
	unmountUnder(env.dir)
	removeTestCgroups()
	if os.Getenv("CRI_TEST_KEEP") == "" {
		_ = os.RemoveAll(env.dir)
	}
}

// testCgroup is the cgroup parent of the test's pods.
func testCgroup() string { return fmt.Sprintf("/podline-cri-test-%d", os.Getpid()) }

// removeTestCgroups removes the test's (empty by now) pod cgroups in every
// hierarchy, deepest first.
func removeTestCgroups() {
	roots, _ := filepath.Glob("/sys/fs/cgroup/*" + testCgroup())
	roots = append(roots, "/sys/fs/cgroup"+testCgroup())
	for _, root := range roots {
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			_ = os.Remove(dirs[i])
		}
	}
}

// unmountUnder lazily unmounts everything mounted below dir.
func unmountUnder(dir string) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	var mounts []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			mounts = append(mounts, f[4])
		}
	}
	for i := len(mounts) - 1; i >= 0; i-- {
		_ = unix.Unmount(mounts[i], unix.MNT_DETACH)
	}
}

// node is one podline-cri on the shared containerd, with its own
// directories, serving on a socket in dir.
type node struct {
	t       testing.TB
	env     *shared
	dir     string
	cfg     daemon.Config
	d       *daemon.Daemon
	conn    *grpc.ClientConn
	rt      runtimeapi.RuntimeServiceClient
	img     runtimeapi.ImageServiceClient
	cleanup []func()
}

// startNode runs podline-cri in-process and connects a CRI client to it.
func startNode(t testing.TB) *node {
	t.Helper()
	e := requireEnv(t)
	dir, err := os.MkdirTemp(e.dir, "node-")
	if err != nil {
		t.Fatal(err)
	}
	confDir := filepath.Join(dir, "net.d")
	_ = os.MkdirAll(confDir, 0o755)
	conf := fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "podline-cri-test",
  "plugins": [
    {"type": "bridge", "bridge": "cri0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "${POD_CIDR}"}]], "routes": [{"dst": "0.0.0.0/0"}], "dataDir": %q}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}`, filepath.Join(e.dir, "ipam"))
	if err := os.WriteFile(filepath.Join(confDir, "10-test.conflist"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := daemon.Defaults()
	cfg.Listen = filepath.Join(dir, "cri.sock")
	cfg.Containerd = e.socket
	cfg.Namespace = namespace
	cfg.SandboxImage = pauseImage
	cfg.RootDir = filepath.Join(e.dir, "cri-root")
	cfg.StateDir = filepath.Join(e.dir, "cri-state")
	cfg.NetNSDir = filepath.Join(e.dir, "netns")
	cfg.HostsDir = filepath.Join(dir, "certs.d")
	cfg.CgroupParent = testCgroup()
	cfg.ImageFsDir = filepath.Join(e.dir, "root")
	cfg.CNIConfDir = confDir
	cfg.CNIBinDirs = []string{cniBinDir}
	cfg.CNICacheDir = filepath.Join(e.dir, "cni-cache")
	cfg.PodCIDR = podCIDR
	n := &node{t: t, env: e, dir: dir, cfg: cfg}
	n.start()
	t.Cleanup(n.stop)
	return n
}

func (n *node) start() {
	n.t.Helper()
	d, err := daemon.Start(context.Background(), n.cfg)
	if err != nil {
		n.t.Fatal(err)
	}
	n.d = d
	conn, err := grpc.NewClient("unix://"+n.cfg.Listen, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", strings.TrimPrefix(addr, "unix://"))
		}))
	if err != nil {
		n.t.Fatal(err)
	}
	n.conn = conn
	n.rt = runtimeapi.NewRuntimeServiceClient(conn)
	n.img = runtimeapi.NewImageServiceClient(conn)
}

// restart stops podline-cri (its containers keep running) and starts a
// new one on the same state.
func (n *node) restart() {
	n.t.Helper()
	n.stopDaemon()
	n.start()
}

func (n *node) stopDaemon() {
	if n.conn != nil {
		_ = n.conn.Close()
		n.conn = nil
	}
	if n.d != nil {
		n.d.Stop()
		n.d = nil
	}
}

// stop removes every sandbox the node still has, then stops it.
func (n *node) stop() {
	if n.rt != nil && n.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if l, err := n.rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{}); err == nil {
			for _, sb := range l.Items {
				_, _ = n.rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id})
				_, _ = n.rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id})
			}
		}
		cancel()
	}
	n.stopDaemon()
}

func (n *node) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	n.t.Cleanup(cancel)
	return ctx
}
