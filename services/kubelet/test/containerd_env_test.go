package test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/netns"
	cnins "github.com/containernetworking/plugins/pkg/ns"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"podline.dev/pkg/client"
	"podline.dev/pkg/pki"
	"podline.dev/pkg/testenv"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/kubelet/internal/runtime/cri"
)

// sharedContainerd is one containerd for all tests of the package, with
// its own CRI plugin serving the kubelet on its socket, and the test
// images imported: started on first use, stopped by TestMain. It runs in
// a network namespace of its own, the node's: its CNI calls make the pod
// bridge there, the kubelet runs there too, and the tests reach pods from
// there.
type sharedContainerd struct {
	repo, dir, socket, config string
	// nodeNS is the node's network namespace; confDir the CNI
	// configuration (pods in testPodCIDR behind the bridge at
	// testGateway); hostsDir the registry hosts directory of the CRI
	// plugin's pulls.
	nodeNS, confDir, hostsDir string
	cmd                       *exec.Cmd
	log                       *os.File
	client                    *containerd.Client
	kubelet                   string // the kubelet binary
	imagesFrom                []string
}

const (
	testPodCIDR = "10.244.77.0/24"
	testGateway = "10.244.77.1"
)

var (
	ctrdOnce sync.Once
	ctrd     *sharedContainerd
	ctrdSkip string
	ctrdErr  error
)

// skipReason says why containerd cannot run here, or "".
func skipReason(repo string) string {
	if os.Geteuid() != 0 {
		return "containerd tests need root (run the tests as root)"
	}
	if _, err := exec.LookPath("runc"); err != nil {
		return "containerd tests need runc in PATH (apt-get install runc, or make kubelet-test-deps)"
	}
	for _, b := range []string{"containerd", "containerd-shim-runc-v2"} {
		if _, err := os.Stat(filepath.Join(repo, "bin", b)); err != nil {
			return fmt.Sprintf("containerd tests need bin/%s (make kubelet-test-deps builds it)", b)
		}
	}
	for _, p := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join(cniBinDir, p)); err != nil {
			return fmt.Sprintf("containerd tests need the CNI plugin %s in %s (apt-get install containernetworking-plugins)", p, cniBinDir)
		}
	}
	if _, err := os.Stat("/sys/fs/cgroup"); err != nil {
		return "containerd tests need /sys/fs/cgroup"
	}
	return ""
}

const cniBinDir = "/usr/lib/cni"

// requireContainerd starts the shared containerd, or skips the test.
func requireContainerd(t testing.TB) *sharedContainerd {
	t.Helper()
	ctrdOnce.Do(func() {
		repo, err := testenv.RepoRoot()
		if err != nil {
			ctrdErr = err
			return
		}
		if ctrdSkip = skipReason(repo); ctrdSkip != "" {
			return
		}
		ctrd, ctrdErr = startSharedContainerd(repo)
	})
	if ctrdSkip != "" {
		t.Skip(ctrdSkip)
	}
	if ctrdErr != nil {
		t.Fatal(ctrdErr)
	}
	return ctrd
}

func startSharedContainerd(repo string) (*sharedContainerd, error) {
	dir, err := os.MkdirTemp("", "podline-kubelet-test-")
	if err != nil {
		return nil, err
	}
	s := &sharedContainerd{repo: repo, dir: dir, socket: filepath.Join(dir, "containerd.sock"), config: filepath.Join(dir, "containerd.toml"),
		confDir: filepath.Join(dir, "net.d"), hostsDir: filepath.Join(dir, "certs.d")}
	ns, err := netns.NewNetNS(filepath.Join(dir, "node-netns"))
	if err != nil {
		return nil, err
	}
	s.nodeNS = ns.GetPath()
	if err := cnins.WithNetNSPath(s.nodeNS, func(cnins.NetNS) error {
		lo, err := netlink.LinkByName("lo")
		if err != nil {
			return err
		}
		return netlink.LinkSetUp(lo)
	}); err != nil {
		return nil, err
	}
	for _, d := range []string{s.confDir, s.hostsDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	conf := fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "podline-test",
  "plugins": [{
    "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
    "ipam": {"type": "host-local", "ranges": [[{"subnet": %q}]], "routes": [{"dst": "0.0.0.0/0"}], "dataDir": %q}
  }]
}`, testPodCIDR, filepath.Join(dir, "ipam"))
	if err := os.WriteFile(filepath.Join(s.confDir, "10-test.conflist"), []byte(conf), 0o644); err != nil {
		return nil, err
	}
	cfg := fmt.Sprintf(`version = 3
root = %q
state = %q
disabled_plugins = ["io.containerd.nri.v1.nri", "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = %q
[ttrpc]
  address = %q
[plugins."io.containerd.internal.v1.opt"]
  path = %q
[plugins."io.containerd.grpc.v1.cri"]
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".registry]
    config_path = %q
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "podline/pause:3.10"
[plugins."io.containerd.cri.v1.runtime"]
  # The machine's capability bounding set lacks CAP_SYS_RESOURCE: no
  # oom_score_adj below containerd's own.
  restrict_oom_score_adj = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = [%q]
    conf_dir = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), s.socket, s.socket+".ttrpc", filepath.Join(dir, "opt"),
		s.hostsDir, cniBinDir, s.confDir)
	if err := os.WriteFile(s.config, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	if s.log, err = os.Create(filepath.Join(dir, "containerd.log")); err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := s.start(); err != nil {
		return nil, err
	}
	t1 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	kubelet, err := buildStatic(dir, "podline.dev/services/kubelet/cmd/kubelet", "kubelet")
	if err != nil {
		return s, err
	}
	s.kubelet = kubelet
	t2 := time.Now()
	if s.imagesFrom, err = importImages(ctx, s.client, dir); err != nil {
		return s, err
	}
	if os.Getenv("KUBELET_TEST_LOG") != "" {
		fmt.Fprintf(os.Stderr, "containerd up in %s, kubelet built in %s, images in %s\n", t1.Sub(t0), t2.Sub(t1), time.Since(t2))
	}
	return s, nil
}

// start runs containerd and connects to it.
func (s *sharedContainerd) start() error {
	s.cmd = exec.Command(filepath.Join(s.repo, "bin", "containerd"), "--config", s.config)
	s.cmd.Env = append(os.Environ(), "PATH="+filepath.Join(s.repo, "bin")+":"+os.Getenv("PATH"))
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A process forked from a thread in the namespace starts in it.
	if err := cnins.WithNetNSPath(s.nodeNS, func(cnins.NetNS) error { return s.cmd.Start() }); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := containerd.New(s.socket, containerd.WithDefaultNamespace("k8s.io"), containerd.WithTimeout(time.Second))
		if err == nil {
			if ok, _ := c.IsServing(context.Background()); ok {
				if s.client != nil {
					s.client.Close()
				}
				s.client = c
				return nil
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("containerd did not start: %v (log %s)", err, s.log.Name())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// restart stops containerd (its shims and containers keep running) and
// starts it again on the same state.
func (s *sharedContainerd) restart() error {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	_ = s.cmd.Wait()
	return s.start()
}

// wipe stops and removes every pod sandbox (and so its containers)
// through the CRI, so containerd's CRI plugin forgets them too.
func (s *sharedContainerd) wipe() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rt, err := cri.New("unix://" + s.socket)
	if err != nil {
		return
	}
	defer rt.Close()
	sbs, err := rt.ListPodSandboxes(ctx, "")
	if err != nil {
		return
	}
	for _, sb := range sbs {
		_ = rt.StopPodSandbox(ctx, sb.ID)
		_ = rt.RemovePodSandbox(ctx, sb.ID)
	}
}

func stopSharedContainerd() {
	if ctrd == nil {
		return
	}
	if ctrd.client != nil {
		ctrd.wipe()
		ctrd.client.Close()
	}
	if ctrd.cmd != nil && ctrd.cmd.Process != nil {
		_ = ctrd.cmd.Process.Signal(syscall.SIGTERM)
		_ = ctrd.cmd.Wait()
	}
	unmountUnder(ctrd.dir)
	if ctrd.nodeNS != "" {
		_ = netns.LoadNetNS(ctrd.nodeNS).Remove()
	}
	if os.Getenv("KUBELET_TEST_KEEP") == "" {
		_ = os.RemoveAll(ctrd.dir)
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

// realNode is one kubelet process on the shared containerd, in a network
// namespace of its own (its "node"), talking to its own apiserver.
type realNode struct {
	t          testing.TB
	ctrd       *sharedContainerd
	dir        string
	name       string
	api        *apiservertest.Server
	pods       *client.Client[*corev1.Pod]
	nodeNS     string
	podCIDR    string
	gateway    string
	cgroupRoot string
	// tls is the apiserver's side of the kubelet server's TLS: the cluster
	// CA and the apiserver's kubelet client certificate.
	tls    *tls.Config
	args   []string
	cmd    *exec.Cmd
	exited chan struct{}
	log    *os.File
}

// startRealNode runs a kubelet on the shared containerd.
func startRealNode(t testing.TB, extraArgs ...string) *realNode {
	t.Helper()
	c := requireContainerd(t)
	dir := t.TempDir()
	n := &realNode{
		t: t, ctrd: c, dir: dir, name: "node-real",
		podCIDR: testPodCIDR, gateway: testGateway,
		cgroupRoot: fmt.Sprintf("/podline-test-%d", os.Getpid()),
	}
	n.api = apiservertest.Start(t)
	n.pods = client.Pods(n.api.Conn)
	pkiDir := filepath.Join(dir, "pki")
	if _, err := pki.Generate(pki.WithDir(pkiDir), pki.WithNodes(n.name), pki.WithEtcdMembers(),
		pki.WithKubeconfigDir(filepath.Join(pkiDir, "kubeconfigs")), pki.WithAdminKubeconfig(filepath.Join(pkiDir, "kubeconfig"))); err != nil {
		t.Fatal(err)
	}
	var err error
	if n.tls, err = (client.Credentials{CAFile: filepath.Join(pkiDir, "ca.crt"),
		CertFile: filepath.Join(pkiDir, "apiserver-kubelet-client.crt"), KeyFile: filepath.Join(pkiDir, "apiserver-kubelet-client.key")}).TLSConfig(); err != nil {
		t.Fatal(err)
	}
	apiSock := filepath.Join(dir, "api.sock")
	if err = proxyUnixToTCP(t, apiSock, n.api.Addr); err != nil {
		t.Fatal(err)
	}
	n.nodeNS = c.nodeNS
	n.args = append([]string{
		"--apiserver", "unix://" + apiSock,
		"--node-name", n.name,
		"--pod-cidr", n.podCIDR,
		"--node-ip", n.gateway,
		"--container-runtime-endpoint", "unix://" + c.socket,
		"--root-dir", filepath.Join(dir, "kubelet"),
		"--pod-logs-dir", filepath.Join(dir, "pods"),
		"--resolv-conf", "",
		"--cluster-dns", "10.96.0.10",
		"--static-pod-path", "",
		"--cgroup-root", n.cgroupRoot,
		"--port", "10250",
		"--tls-cert-file", filepath.Join(pkiDir, pki.KubeletServingCertName(n.name)+".crt"),
		"--tls-private-key-file", filepath.Join(pkiDir, pki.KubeletServingCertName(n.name)+".key"),
		"--client-ca-file", filepath.Join(pkiDir, "ca.crt"),
		// The test apiserver runs without authorization: nothing to ask.
		"--authorization-mode", "AlwaysAllow",
		"--sync-frequency", "1s",
		"--relist-period", "100ms",
		"--node-status-update-frequency", "500ms",
		"--node-lease-renew-interval", "1s",
		"--crashloop-max-restart-period", "2s",
		"-v", "debug",
	}, extraArgs...)
	if n.log, err = os.Create(filepath.Join(dir, "kubelet.log")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.cleanup)
	n.startKubelet()
	nodes := client.Nodes(n.api.Conn)
	eventually(t, 30*time.Second, "node Ready", func() (bool, string) {
		node, err := nodes.Get(context.Background(), "", n.name)
		if err != nil {
			return false, err.Error()
		}
		for _, c := range node.GetStatus().GetConditions() {
			if c.GetType() == "Ready" {
				return c.GetStatus() == "True", c.GetMessage()
			}
		}
		return false, "no Ready condition"
	})
	return n
}

// startKubelet runs the kubelet binary inside the node's network namespace.
func (n *realNode) startKubelet() {
	n.t.Helper()
	cmd := exec.Command(n.ctrd.kubelet, n.args...)
	cmd.Stdout, cmd.Stderr = n.log, n.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A process forked from a thread in the namespace starts in it.
	if err := cnins.WithNetNSPath(n.nodeNS, func(cnins.NetNS) error { return cmd.Start() }); err != nil {
		n.t.Fatal(err)
	}
	n.cmd = cmd
	n.exited = make(chan struct{})
	go func() { _ = cmd.Wait(); close(n.exited) }()
}

// killKubelet stops the kubelet with SIGKILL: nothing is cleaned up.
func (n *realNode) killKubelet() {
	_ = n.cmd.Process.Kill()
	<-n.exited
}

func (n *realNode) stopKubelet() {
	select {
	case <-n.exited:
		return
	default:
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
	case <-time.After(10 * time.Second):
		_ = n.cmd.Process.Kill()
		<-n.exited
	}
}

func (n *realNode) cleanup() {
	n.stopKubelet()
	if n.t.Failed() || os.Getenv("KUBELET_TEST_LOG") != "" {
		if b, err := os.ReadFile(n.log.Name()); err == nil {
			lines := strings.Split(string(b), "\n")
			if len(lines) > 150 {
				lines = lines[len(lines)-150:]
			}
			n.t.Logf("kubelet log (last lines):\n%s", strings.Join(lines, "\n"))
		}
	}
	n.log.Close()
	n.ctrd.wipe()
	unmountUnder(n.dir)
	removeCgroups(n.cgroupRoot)
}

// removeCgroups removes a cgroup subtree in every hierarchy, leaves first.
func removeCgroups(rel string) {
	roots, _ := filepath.Glob("/sys/fs/cgroup/*")
	roots = append(roots, "/sys/fs/cgroup")
	for _, root := range roots {
		top := filepath.Join(root, rel)
		var dirs []string
		_ = filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			_ = unix.Rmdir(dirs[i])
		}
	}
}

// proxyUnixToTCP serves a unix socket that forwards to addr: the kubelet,
// in its own network namespace, reaches the test's apiserver through it.
func proxyUnixToTCP(t testing.TB, path, addr string) error {
	lis, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	t.Cleanup(func() { lis.Close() })
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				u, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				defer u.Close()
				done := make(chan struct{}, 2)
				go func() { _, _ = io.Copy(u, c); done <- struct{}{} }()
				go func() { _, _ = io.Copy(c, u); done <- struct{}{} }()
				<-done
			}()
		}
	}()
	return nil
}

// dialInNode dials from the node's network namespace.
func (n *realNode) dialInNode(ctx context.Context, network, addr string) (net.Conn, error) {
	var conn net.Conn
	err := cnins.WithNetNSPath(n.nodeNS, func(cnins.NetNS) error {
		var err error
		conn, err = (&net.Dialer{Timeout: 2 * time.Second}).DialContext(ctx, network, addr)
		return err
	})
	return conn, err
}

// httpInNode is an HTTP client whose connections start in the node's
// network namespace; over HTTPS it is the apiserver reaching the kubelet.
func (n *realNode) httpInNode() *http.Client {
	return &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DialContext: n.dialInNode, DisableKeepAlives: true, TLSClientConfig: n.tls}}
}

func (n *realNode) get(url string) (string, error) {
	resp, err := n.httpInNode().Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return string(b), fmt.Errorf("%s: %s", url, resp.Status)
	}
	return string(b), err
}

// criKindLabel is the label containerd's CRI plugin marks its containerd
// containers with: "sandbox" or "container".
const criKindLabel = "io.cri-containerd.kind"
