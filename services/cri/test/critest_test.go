package test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/core/remotes/docker"

	"podline.dev/pkg/testenv"
)

// critestSkip are the specs that need what these machines lack.
var critestSkip = []string{
	"AppArmor", "SELinux", "[Ss]eccomp.*[Ll]ocalhost", // no LSMs here; no profiles on disk
	"UserNamespaces", "user namespace", // the kernel and runc setup have no idmapped mounts
	"NRI",             // no NRI socket
	"digest",          // images pinned by a digest of the public registry's
	"runtime-handler", // one runtime handler only
	"RuntimeConfig",   // cgroup v2 checks
	"benchmark",       // not validation
	"[Ww]indows",      // Linux only
}

// TestCritest runs cri-tools' validation suite against podline-cri, with
// its images served by a bin/registry on loopback that the node's hosts
// directory names as the mirror of registry.k8s.io and gcr.io. It runs
// when CRI_CRITEST names bin/critest (make critest) and prints the pass
// count.
func TestCritest(t *testing.T) {
	critest := os.Getenv("CRI_CRITEST")
	if critest == "" {
		t.Skip("set CRI_CRITEST to bin/critest to run cri-tools' validation suite (make critest)")
	}
	e := requireEnv(t)
	regBin := filepath.Join(e.repo, "bin", "registry")
	if _, err := os.Stat(regBin); err != nil {
		t.Skip("critest needs bin/registry to serve its images offline (make bin/registry)")
	}
	regAddr := startRegistry(t, regBin)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := pushCritestImages(ctx, e.client, regAddr); err != nil {
		t.Fatal(err)
	}
	n := startNode(t)
	n.cfg.AllowPrivileged = true // the suite's privileged specs
	for _, host := range []string{"registry.k8s.io", "gcr.io"} {
		d := filepath.Join(n.cfg.HostsDir, host)
		_ = os.MkdirAll(d, 0o755)
		conf := fmt.Sprintf("server = \"https://%s\"\n[host.\"http://%s\"]\n  capabilities = [\"pull\", \"resolve\"]\n", host, regAddr)
		if err := os.WriteFile(filepath.Join(d, "hosts.toml"), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n.restart() // hosts are read per pull, but start clean

	endpoint := "unix://" + n.cfg.Listen
	args := []string{"--runtime-endpoint", endpoint, "--image-endpoint", endpoint,
		"--ginkgo.skip", strings.Join(critestSkip, "|"), "--ginkgo.no-color", "--ginkgo.timeout", "50m"}
	if f := os.Getenv("CRI_CRITEST_FOCUS"); f != "" {
		args = append(args, "--ginkgo.focus", f)
	}
	cmd := exec.Command(critest, args...)
	cmd.Dir = n.dir
	out, err := os.Create(filepath.Join(e.dir, "critest.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	runErr := cmd.Run()
	summary, failed := critestSummary(out.Name())
	t.Logf("critest against podline-cri: %s (log %s)", summary, out.Name())
	for _, f := range failed {
		t.Logf("failed: %s", f)
	}
	if runErr != nil {
		t.Errorf("critest: %v", runErr)
	}
}

// critestSummary reads ginkgo's closing counts and the failed specs.
func critestSummary(path string) (string, []string) {
	f, err := os.Open(path)
	if err != nil {
		return err.Error(), nil
	}
	defer f.Close()
	counts := regexp.MustCompile(`^(Ran \d+ of \d+ Specs.*|(SUCCESS|FAIL)! -- .*)$`)
	failed := regexp.MustCompile(`^\s*\[FAIL\] (.*)$`)
	var sum []string
	var fails []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if counts.MatchString(line) {
			sum = append(sum, strings.TrimSpace(line))
		}
		if m := failed.FindStringSubmatch(line); m != nil {
			fails = append(fails, m[1])
		}
	}
	return strings.Join(sum, "; "), fails
}

// startRegistry runs bin/registry over plain HTTP on loopback.
func startRegistry(t *testing.T, bin string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	cfg := fmt.Sprintf("version: 0.1\nlog: {level: error}\nstorage:\n  filesystem: {rootdirectory: %s}\nhttp:\n  addr: %q\n", filepath.Join(dir, "data"), addr)
	if err := os.WriteFile(filepath.Join(dir, "config.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", filepath.Join(dir, "config.yml"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	testenv.Eventually(t, 20*time.Second, "registry up", func() error {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("%s", resp.Status)
		}
		return nil
	})
	return addr
}

// pushCritestImages builds critest's images from busybox and pushes each
// to the registry under the path its public name has.
func pushCritestImages(ctx context.Context, c *containerd.Client, reg string) error {
	files, err := busyboxFiles()
	if err != nil {
		return err
	}
	page := []byte("<html><head><title>Welcome to nginx!</title></head><body><h1>It works!</h1></body></html>\n")
	web := map[string]imageFile{}
	for k, v := range files {
		web[k] = v
	}
	web["www/index.html"] = imageFile{data: page, mode: 0o644}
	web["etc/passwd"] = imageFile{mode: 0o644, data: []byte(string(files["etc/passwd"].data) + "www-data:x:33:33:www-data:/var/www:/bin/false\n")}
	web["etc/group"] = imageFile{mode: 0o644, data: []byte(string(files["etc/group"].data) + "www-data:x:33:\ngroup50000:x:50000:user\n")}
	// A stand-in for nginx: PID 1 keeps "nginx: master process" in its
	// command line and its PID in /var/run/nginx.pid, as the suite reads.
	httpd := []string{"sh", "-c", "mkdir -p /var/run; echo $$ >/var/run/nginx.pid; trap 'kill $!; exit 0' TERM; httpd -f -v -p 80 -h /www & wait", "nginx: master process"}
	plain := testImage{cmd: []string{"sh"}, files: web}
	server := testImage{entrypoint: httpd, files: web}
	user := func(u string) testImage { i := plain; i.user = u; return i }
	list := map[string]testImage{
		"e2e-test-images/busybox:1.29-2":                       plain,
		"e2e-test-images/nginx:1.14-2":                         server,
		"e2e-test-images/httpd:2.4.39-4":                       server,
		"k8s-staging-cri-tools/hostnet-nginx-amd64":            server,
		"k8s-staging-cri-tools/test-image-latest":              plain,
		"k8s-staging-cri-tools/test-image-tag:test":            plain,
		"k8s-staging-cri-tools/test-image-tag:all":             plain,
		"k8s-staging-cri-tools/test-image-1:latest":            plain,
		"k8s-staging-cri-tools/test-image-2:latest":            plain,
		"k8s-staging-cri-tools/test-image-3:latest":            plain,
		"k8s-staging-cri-tools/test-image-tags:1":              plain,
		"k8s-staging-cri-tools/test-image-tags:2":              plain,
		"k8s-staging-cri-tools/test-image-tags:3":              plain,
		"k8s-staging-cri-tools/test-image-user-uid":            user("1002"),
		"k8s-staging-cri-tools/test-image-user-username":       user("www-data"),
		"k8s-staging-cri-tools/test-image-user-uid-group":      user("1003:users"),
		"k8s-staging-cri-tools/test-image-user-username-group": user("www-data:www-data"),
		"k8s-staging-cri-tools/test-image-predefined-group":    user("1000"),
	}
	for path, img := range list {
		// A resolver of its own per push: a shared one remembers blobs
		// pushed to another repository and skips them here.
		resolver := docker.NewResolver(docker.ResolverOptions{PlainHTTP: true})
		if !strings.Contains(path, ":") {
			path += ":latest"
		}
		img.name = reg + "/" + path
		// Distinct images where the suite tells images apart; the
		// others are one image under many names, as it expects.
		if strings.HasPrefix(path, "k8s-staging-cri-tools/test-image-") && strings.HasSuffix(path, ":latest") &&
			len(strings.TrimSuffix(strings.TrimPrefix(path, "k8s-staging-cri-tools/test-image-"), ":latest")) == 1 {
			img.files = withMarker(img.files, path)
		}
		if err := importImage(ctx, c, img); err != nil {
			return err
		}
		i, err := c.GetImage(ctx, img.name)
		if err != nil {
			return err
		}
		if err := c.Push(ctx, img.name, i.Target(), containerd.WithResolver(resolver)); err != nil {
			return fmt.Errorf("push %s: %w", img.name, err)
		}
		if err := c.ImageService().Delete(ctx, img.name, images.SynchronousDelete()); err != nil {
			return err
		}
	}
	return nil
}

func withMarker(files map[string]imageFile, name string) map[string]imageFile {
	out := make(map[string]imageFile, len(files)+1)
	for k, v := range files {
		out[k] = v
	}
	out["etc/podline-test-image"] = imageFile{data: []byte(name + "\n"), mode: 0o644}
	return out
}
