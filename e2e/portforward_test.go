//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// forwardingFrom is kubectl port-forward's line for each local listener.
var forwardingFrom = regexp.MustCompile(`^Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)`)

// portForward runs `kubectl port-forward target ports` (":8080" picks a
// free local port, "18080:80" names it) with env added to kubectl's
// environment, waits for it to listen and returns the local port; kubectl
// is stopped when the test ends.
func portForward(t *testing.T, target, ports string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, kubectlBin, "--kubeconfig", kubeconfig, "port-forward", target, ports)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
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
			t.Logf("kubectl port-forward %s stderr:\n%s", target, stderr.String())
		}
	})
	local := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := forwardingFrom.FindStringSubmatch(sc.Text()); m != nil {
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
	case <-time.After(time.Minute):
		t.Fatalf("kubectl port-forward %s printed no Forwarding line; stderr:\n%s", target, stderr.String())
		return ""
	}
}

// getLocal GETs / on the local port.
func getLocal(port string) (string, error) {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://127.0.0.1:" + port + "/")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %q", resp.Status, b)
	}
	return string(b), nil
}

// kubectl port-forward reaches a Pod's port from the host, over kubectl
// 1.37's WebSocket tunnel (its default) and over SPDY (its fallback, forced
// here), through the apiserver's relay to the Pod's kubelet; several
// connections share one forward.
func TestKubectlPortForwardPod(t *testing.T) {
	const name = "pf-demo"
	if out := mustKubectl(t, "", "run", name, "--image="+webImage, "--port=8080"); strings.TrimSpace(out) != "pod/"+name+" created" {
		t.Fatalf("kubectl run printed %q", out)
	}
	defer mustKubectl(t, "", "delete", "pod", name, "--ignore-not-found", "--wait=false")
	waitRunning(t, "default", "run="+name, 1, 2*time.Minute)

	for _, c := range []struct {
		name string
		env  []string
	}{
		{"websocket", nil},
		{"spdy", []string{"KUBECTL_PORT_FORWARD_WEBSOCKETS=false"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			port := portForward(t, "pod/"+name, ":8080", c.env...)
			for i := 0; i < 3; i++ {
				var body string
				eventually(t, 30*time.Second, "GET / through port-forward", func() error {
					var err error
					body, err = getLocal(port)
					return err
				})
				if !strings.Contains(body, name) {
					t.Fatalf("request %d answered %q, want the pod's name %q", i, body, name)
				}
			}
		})
	}
}

// kubectl port-forward svc/NAME 18080:80, as the scenario runs it,
// picks a Pod behind the Service and maps the
// Service's port 80 to its targetPort 8080 (kubectl does both); the answer
// names one of the Deployment's Pods.
func TestKubectlPortForwardService(t *testing.T) {
	const name = "pf-web"
	mustKubectl(t, manifest(t, deployment(name, 2)), "apply", "-f", "-")
	defer deleteDeployment(t, name)
	running := waitRunning(t, "default", "app="+name, 2, 3*time.Minute)
	if _, err := kubectl(t, "", "expose", "deployment", name, "--port=80", "--target-port=8080"); err != nil {
		t.Skipf("the Service %s cannot be created here yet: %v", name, err)
	}
	defer mustKubectl(t, "", "delete", "service", name, "--ignore-not-found")

	port := portForward(t, "svc/"+name, "18080:80")
	var body string
	eventually(t, 30*time.Second, "GET / through port-forward to svc/"+name, func() error {
		var err error
		body, err = getLocal(port)
		return err
	})
	for _, p := range running {
		if strings.Contains(body, p.Metadata.Name) {
			return
		}
	}
	t.Fatalf("svc/%s answered %q, not from one of its pods %v", name, body, running)
}
