package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"podline.dev/pkg/client"
	"podline.dev/pkg/testenv"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/kubelet/internal/runtime"
)

var forwarding = regexp.MustCompile(`^Forwarding from 127\.0\.0\.1:(\d+) -> 8080`)

// The real kubectl 1.37 forwards to a pod through a real apiserver and
// this server over a fake runtime whose port 8080 is an HTTP server here:
// over its WebSocket tunnel, which the apiserver turns into SPDY, and over
// SPDY, its fallback. (With -v=6 the first shows kubectl's tunneling
// dialer getting 101 and "Negotiation complete" protocol=portforward.k8s.io
// without falling back.) Without bin/kubectl ($KUBECTL) the test is
// skipped.
func TestKubectlPortForwardThroughTheAPIServer(t *testing.T) {
	bin := os.Getenv("KUBECTL")
	if bin == "" {
		if root, err := testenv.RepoRoot(); err == nil {
			bin = filepath.Join(root, "bin", "kubectl")
		}
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skip("bin/kubectl is not built (make kubectl), and $KUBECTL is not set")
	}
	api := apiservertest.StartSecure(t)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "hello from web\n")
	}))
	t.Cleanup(web.Close)

	// The kubelet of node-1 over the apiserver's PKI, trusting the
	// apiserver's kubelet client alone.
	url, rt, _ := setupWith(t, kubeletConfig(t, api.PKI, onlyTheAPIServer))
	rt.SetPortForwardAddr(func(_ *runtime.Sandbox, port int32) string {
		if port == 8080 {
			return strings.TrimPrefix(web.URL, "http://")
		}
		return "127.0.0.1:1"
	})
	_, kport, _ := net.SplitHostPort(strings.TrimPrefix(url, "https://"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nodes := client.Nodes(api.Conn)
	n, err := nodes.Create(ctx, &corev1.Node{Metadata: &metav1.ObjectMeta{Name: testNode}})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(kport)
	n.Status = &corev1.NodeStatus{
		Addresses:       []*corev1.NodeAddress{{Type: "Hostname", Address: "localhost"}},
		DaemonEndpoints: &corev1.NodeDaemonEndpoints{KubeletEndpoint: &corev1.DaemonEndpoint{Port: int32(p)}},
	}
	if _, err := nodes.UpdateStatus(ctx, n); err != nil {
		t.Fatal(err)
	}
	pods := client.Pods(api.Conn)
	pod, err := pods.Create(ctx, &corev1.Pod{
		Metadata: &metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:     &corev1.PodSpec{NodeName: testNode, Containers: []*corev1.Container{{Name: "c", Image: "img:1"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status = &corev1.PodStatus{Phase: "Running"} // kubectl forwards only to a running pod
	if _, err := pods.UpdateStatus(ctx, pod); err != nil {
		t.Fatal(err)
	}

	admin := api.Credentials(t, "root", "system:masters")
	kcfg := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: %q, certificate-authority: %q}\n"+
		"contexts:\n- name: c\n  context: {cluster: c, user: u, namespace: default}\ncurrent-context: c\n"+
		"users:\n- name: u\n  user: {client-certificate: %q, client-key: %q}\n", api.URL, admin.CAFile, admin.CertFile, admin.KeyFile)
	if err := os.WriteFile(kcfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct{ name, websockets string }{{"websocket", "true"}, {"spdy", "false"}} {
		t.Run(c.name, func(t *testing.T) {
			port := kubectlPortForward(t, bin, kcfg, "KUBECTL_PORT_FORWARD_WEBSOCKETS="+c.websockets)
			hc := &http.Client{Timeout: 10 * time.Second}
			for i := 0; i < 3; i++ {
				resp, err := hc.Get("http://127.0.0.1:" + port + "/")
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != "hello from web\n" {
					t.Fatalf("request %d: %s %q", i, resp.Status, b)
				}
			}
		})
	}
}

// kubectlPortForward runs `kubectl port-forward pod/web :8080` until the
// test ends and returns the local port it listens on.
func kubectlPortForward(t *testing.T, bin, kcfg string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--kubeconfig", kcfg, "port-forward", "pod/web", ":8080")
	cmd.Env = append(append(os.Environ(), "HOME="+t.TempDir()), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("kubectl stderr:\n%s", stderr.String())
		}
	})
	local := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := forwarding.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case local <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case p := <-local:
		return p
	case <-time.After(30 * time.Second):
		t.Fatalf("kubectl printed no Forwarding line; stderr:\n%s", stderr.String())
		return ""
	}
}
