package test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/core/remotes/docker"
	"github.com/containerd/containerd/v2/core/remotes/docker/config"
	cnins "github.com/containernetworking/plugins/pkg/ns"

	"podline.dev/pkg/pki"
	"podline.dev/services/kubelet/internal/runtime"
	"podline.dev/services/kubelet/internal/runtime/cri"
)

// tlsRegistry is a real bin/registry (distribution) on the loopback of the
// node's network namespace (where the runtime pulls from), serving TLS only
// with a serving pair of its own cluster CA, as compose runs it.
type tlsRegistry struct {
	addr   string // 127.0.0.1:port in netns
	caFile string // the CA that signed its certificate
	netns  string // the network namespace it listens in
}

// dialIn dials from inside the network namespace at path: a socket
// belongs to the namespace it was made in, so the test process reaches
// the node's loopback.
func dialIn(path string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var conn net.Conn
		err := cnins.WithNetNSPath(path, func(cnins.NetNS) error {
			var d net.Dialer
			var err error
			conn, err = d.DialContext(ctx, network, addr)
			return err
		})
		return conn, err
	}
}

// startTLSRegistry makes a cluster CA and the registry's serving pair with
// pkg/pki (registry/server.{crt,key}: registry.podline, localhost,
// 127.0.0.1) and runs bin/registry with them in the network namespace
// netns, or skips.
func startTLSRegistry(t *testing.T, repo, netns string) tlsRegistry {
	t.Helper()
	bin := filepath.Join(repo, "bin", "registry")
	if _, err := os.Stat(bin); err != nil {
		t.Skip("needs bin/registry (make registry-image builds it)")
	}
	dir := t.TempDir()
	pkiDir := filepath.Join(dir, "pki")
	if _, err := pki.Generate(pki.WithDir(pkiDir), pki.WithNodes(), pki.WithEtcdMembers(),
		pki.WithKubeconfigDir(filepath.Join(pkiDir, "kubeconfigs")), pki.WithAdminKubeconfig(filepath.Join(pkiDir, "kubeconfig"))); err != nil {
		t.Fatal(err)
	}
	var addr string
	if err := cnins.WithNetNSPath(netns, func(cnins.NetNS) error {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		addr = l.Addr().String()
		return l.Close()
	}); err != nil {
		t.Fatal(err)
	}
	pair := filepath.Join(pkiDir, pki.RegistryDir, "server")
	cfg := fmt.Sprintf("version: 0.1\nlog: {level: error}\nstorage:\n  filesystem: {rootdirectory: %s}\n"+
		"http:\n  addr: %q\n  tls: {certificate: %s, key: %s}\n",
		filepath.Join(dir, "data"), addr, pair+".crt", pair+".key")
	if err := os.WriteFile(filepath.Join(dir, "config.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", filepath.Join(dir, "config.yml"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cnins.WithNetNSPath(netns, func(cnins.NetNS) error { return cmd.Start() }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	r := tlsRegistry{addr: addr, caFile: filepath.Join(pkiDir, "ca.crt"), netns: netns}
	ca, err := os.ReadFile(r.caFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, DialContext: dialIn(netns)}}
	eventually(t, 10*time.Second, "registry up over TLS", func() (bool, string) {
		resp, err := c.Get("https://" + addr + "/v2/")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == 200, resp.Status
	})
	return r
}

// hostsDir lays out a registry hosts directory as the node image does:
// registry.podline:5000/hosts.toml is the node's own file
// (services/kubelet/node/hosts.toml) with its server pointed at the test's
// registry and its `ca` at the test's CA, or with no `ca` line at all.
func (r tlsRegistry) hostsDir(t *testing.T, repo string, withCA bool) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "services", "kubelet", "node", "hosts.toml"))
	if err != nil {
		t.Fatal(err)
	}
	const server, ca = `"https://registry.podline:5000"`, `"/etc/kubernetes/pki/ca.crt"`
	var lines []string
	found := map[string]int{}
	for _, line := range strings.Split(string(b), "\n") {
		key, _, _ := strings.Cut(strings.TrimSpace(line), " =")
		switch {
		case key == "server" && strings.Contains(line, server):
			found[key]++
			line = strings.Replace(line, server, fmt.Sprintf("%q", "https://"+r.addr), 1)
		case key == "ca" && strings.Contains(line, ca):
			found[key]++
			if !withCA {
				continue
			}
			line = strings.Replace(line, ca, fmt.Sprintf("%q", r.caFile), 1)
		}
		lines = append(lines, line)
	}
	if found["server"] != 1 || found["ca"] != 1 {
		t.Fatalf("the node's hosts.toml should name server %s and ca %s once each:\n%s", server, ca, b)
	}
	dir := t.TempDir()
	reg := filepath.Join(dir, "registry.podline:5000")
	if err := os.MkdirAll(reg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(reg, "hosts.toml"), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The CRI runtime (containerd's CRI plugin here) pulls registry.podline:5000 images over TLS, verifying the
// registry with the cluster CA that the node's hosts.toml names (`ca`),
// and refuses the registry when hosts.toml names no CA: its certificate is
// not signed by any of the system's roots.
func TestCRIRuntimePullsFromTheTLSRegistryWithTheClusterCA(t *testing.T) {
	c := requireContainerd(t)
	reg := startTLSRegistry(t, c.repo, c.nodeNS)
	ctx := ctxFor(t, 2*time.Minute)
	withCA := reg.hostsDir(t, c.repo, true)

	// Push the web image there under a name of its own, over TLS with the CA.
	const ref = "registry.podline:5000/demo/pulltest:1.0"
	web, err := c.client.GetImage(ctx, webImage)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.client.ImageService().Create(ctx, images.Image{Name: ref, Target: web.Target()}); err != nil {
		t.Fatal(err)
	}
	resolver := docker.NewResolver(docker.ResolverOptions{Hosts: config.ConfigureHosts(ctx, config.HostOptions{
		HostDir: config.HostDirFromRoot(withCA),
		UpdateClient: func(hc *http.Client) error {
			tr, ok := hc.Transport.(*http.Transport)
			if !ok {
				return fmt.Errorf("registry client transport %T", hc.Transport)
			}
			tr.DialContext = dialIn(reg.netns)
			return nil
		},
	})})
	if err := c.client.Push(ctx, ref, web.Target(), containerd.WithResolver(resolver)); err != nil {
		t.Fatal(err)
	}
	if err := c.client.ImageService().Delete(ctx, ref); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.client.ImageService().Delete(ctx, ref) })

	// containerd's CRI plugin reads its registry hosts directory at every
	// pull: the test writes the node's hosts.toml there, without then with
	// the CA.
	useHosts := func(t *testing.T, from string) {
		t.Helper()
		dst := filepath.Join(c.hostsDir, "registry.podline:5000")
		_ = os.RemoveAll(dst)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(from, "registry.podline:5000", "hosts.toml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, "hosts.toml"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = os.RemoveAll(filepath.Join(c.hostsDir, "registry.podline:5000")) })
	rt, err := cri.New("unix://" + c.socket)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	var _ runtime.Runtime = rt

	t.Run("without the CA the pull is refused", func(t *testing.T) {
		useHosts(t, reg.hostsDir(t, c.repo, false))
		_, err := rt.PullImage(ctx, ref)
		if err == nil || !strings.Contains(err.Error(), "x509") {
			t.Fatalf("pull without the CA: %v, want an x509 error", err)
		}
		t.Logf("refused: %v", err)
		if _, err := rt.ImageStatus(ctx, ref); err == nil {
			t.Fatal("image present after the refused pull")
		}
	})

	t.Run("with the node's hosts.toml the pull verifies the registry", func(t *testing.T) {
		useHosts(t, withCA)
		if _, err := rt.ImageStatus(ctx, ref); err == nil {
			t.Fatal("image present before the pull")
		}
		id, err := rt.PullImage(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		// A CRI image ID is the image's config digest; the manifest pushed
		// is named by its repo digest.
		img, err := rt.ImageStatus(ctx, ref)
		wantDigest := "registry.podline:5000/demo/pulltest@" + web.Target().Digest.String()
		if err != nil || id != img.ID || !slices.Contains(img.RepoDigests, wantDigest) {
			t.Fatalf("after the pull: %+v %v (id %s), want repo digest %s", img, err, id, wantDigest)
		}
		if _, err := rt.PullImage(ctx, "registry.podline:5000/demo/absent:1"); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Fatalf("pull of an image the registry does not have: %v, want not found", err)
		}
	})
}
