package test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/core/remotes/docker"
	"github.com/containerd/containerd/v2/core/remotes/docker/config"

	"podline.dev/services/kubelet/internal/runtime"
	ctrdrt "podline.dev/services/kubelet/internal/runtime/containerd"
)

// startRegistry runs bin/registry (distribution) on loopback, or skips.
func startRegistry(t *testing.T, repo string) string {
	t.Helper()
	bin := filepath.Join(repo, "bin", "registry")
	if _, err := os.Stat(bin); err != nil {
		t.Skip("needs bin/registry (make registry-image builds it)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	cfg := fmt.Sprintf("version: 0.1\nlog: {level: error}\nstorage:\n  filesystem: {rootdirectory: %s}\nhttp: {addr: %q}\n", filepath.Join(dir, "data"), addr)
	if err := os.WriteFile(filepath.Join(dir, "config.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", filepath.Join(dir, "config.yml"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	eventually(t, 10*time.Second, "registry up", func() (bool, string) {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == 200, resp.Status
	})
	return addr
}

// The runtime pulls registry.podline:5000 images over plain HTTP as the
// node's /etc/containerd/certs.d/registry.podline:5000/hosts.toml says.
func TestContainerdRuntimePullsFromAPlainHTTPRegistry(t *testing.T) {
	c := requireContainerd(t)
	addr := startRegistry(t, c.repo)
	ctx := ctxFor(t, 2*time.Minute)

	// The hosts directory, as the node image lays it out, pointing the
	// registry's name at the test's registry.
	hostsDir := t.TempDir()
	reg := filepath.Join(hostsDir, "registry.podline:5000")
	_ = os.MkdirAll(reg, 0o755)
	hosts := fmt.Sprintf("server = \"http://%s\"\n[host.\"http://%s\"]\n  capabilities = [\"pull\", \"resolve\", \"push\"]\n", addr, addr)
	if err := os.WriteFile(filepath.Join(reg, "hosts.toml"), []byte(hosts), 0o644); err != nil {
		t.Fatal(err)
	}

	// Push the web image there under a name of its own.
	const ref = "registry.podline:5000/demo/pulltest:1.0"
	web, err := c.client.GetImage(ctx, webImage)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.client.ImageService().Create(ctx, images.Image{Name: ref, Target: web.Target()}); err != nil {
		t.Fatal(err)
	}
	resolver := docker.NewResolver(docker.ResolverOptions{Hosts: config.ConfigureHosts(ctx, config.HostOptions{HostDir: config.HostDirFromRoot(hostsDir)})})
	if err := c.client.Push(ctx, ref, web.Target(), containerd.WithResolver(resolver)); err != nil {
		t.Fatal(err)
	}
	if err := c.client.ImageService().Delete(ctx, ref); err != nil {
		t.Fatal(err)
	}

	rt, err := ctrdrt.New(c.socket, ctrdrt.WithRegistryHostsDir(hostsDir))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if _, err := rt.ImageStatus(ctx, ref); err == nil {
		t.Fatal("image present before the pull")
	}
	id, err := rt.PullImage(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := rt.ImageStatus(ctx, ref)
	if err != nil || img.ID != web.Target().Digest.String() || id != "registry.podline:5000/demo/pulltest@"+img.ID {
		t.Fatalf("after the pull: %+v %v (id %s)", img, err, id)
	}
	if _, err := rt.PullImage(ctx, "registry.podline:5000/demo/absent:1"); err == nil {
		t.Fatal("pulled an image the registry does not have")
	}
	_ = c.client.ImageService().Delete(ctx, ref)
	var _ runtime.Runtime = rt
}
