package test

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "podline.dev/proto/core/v1"

	"podline.dev/services/kubelet/internal/runtime/cri"
)

// The CRI runtime's PortForward (what the kubelet server's port-forward
// endpoint calls) reaches a pod's port through the runtime's streaming
// server: an HTTP request to the web container's 8080 is answered.
func TestContainerdPortForwardReachesThePodsPort(t *testing.T) {
	n := startRealNode(t)
	ctx := ctxFor(t, time.Minute)
	pod := makePod("forwarded").node(n.name).container("web", webImage).port(8080).
		readiness(httpGet("/healthz", 8080), 1).obj()
	if _, err := n.pods.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, n.pods, "forwarded", 45*time.Second, "Ready", func(p *corev1.Pod) bool { return condition(p, "Ready") == "True" })
	// The streaming server listens on the node's loopback.
	rt, err := cri.New("unix://"+n.ctrd.socket, cri.WithStreamDialContext(n.dialInNode))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	sbs, err := rt.ListPodSandboxes(ctx, p.GetMetadata().GetUid())
	if err != nil || len(sbs) != 1 {
		t.Fatalf("sandboxes %v %v", sbs, err)
	}
	local, remote := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- rt.PortForward(ctx, sbs[0].ID, 8080, remote) }()
	if _, err := io.WriteString(local, "GET / HTTP/1.0\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = local.SetReadDeadline(time.Now().Add(20 * time.Second))
	got, _ := io.ReadAll(local)
	if !strings.HasPrefix(string(got), "HTTP/1.0 200") || !strings.Contains(string(got), "hello from forwarded at "+p.GetStatus().GetPodIp()) {
		t.Fatalf("through port-forward: %q", got)
	}
	local.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("PortForward: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("PortForward did not return after the pod closed the connection")
	}
}
