package test

import (
	"strings"
	"testing"
	"time"

	corev1 "podline.dev/proto/core/v1"
)

// A restart of the kubelet, then of containerd, loses nothing: the pod's
// container keeps running (same container, no restart), keeps its IP and
// keeps answering, its status stays Ready, and the kubelet still runs new
// pods afterwards.
func TestContainerdKubeletAndContainerdRestartsLoseNothing(t *testing.T) {
	n := startRealNode(t)
	ctx := ctxFor(t, 2*time.Minute)
	pod := makePod("steady").node(n.name).container("web", webImage).port(8080).
		readiness(httpGet("/healthz", 8080), 1).obj()
	if _, err := n.pods.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	before := waitPod(t, n.pods, "steady", 60*time.Second, "Ready", func(p *corev1.Pod) bool { return condition(p, "Ready") == "True" })
	ip := before.GetStatus().GetPodIp()
	id := before.GetStatus().GetContainerStatuses()[0].GetContainerId()

	rv := before.GetMetadata().GetResourceVersion()
	unchanged := func(stage string) {
		t.Helper()
		// Long enough for a few syncs and relists of the new process.
		time.Sleep(3 * time.Second)
		p, err := n.pods.Get(ctx, "default", "steady")
		if err != nil {
			t.Fatal(err)
		}
		cs := p.GetStatus().GetContainerStatuses()[0]
		if p.GetStatus().GetPodIp() != ip || cs.GetContainerId() != id || cs.GetRestartCount() != 0 || condition(p, "Ready") != "True" {
			t.Fatalf("after %s: %s ip=%s id=%s (before ip=%s id=%s)", stage, describe(p), p.GetStatus().GetPodIp(), cs.GetContainerId(), ip, id)
		}
		if body, err := n.get("http://" + ip + ":8080/"); err != nil || !strings.Contains(body, "hello") {
			t.Fatalf("after %s the pod does not answer: %q %v", stage, body, err)
		}
		// Nothing changed, so nothing was written: not even a flip to
		// unready and back.
		if got := p.GetMetadata().GetResourceVersion(); got != rv {
			t.Errorf("after %s the pod was rewritten (resourceVersion %s -> %s)", stage, rv, got)
			rv = got
		}
	}

	n.killKubelet()
	if body, err := n.get("http://" + ip + ":8080/"); err != nil || !strings.Contains(body, "hello") {
		t.Fatalf("with the kubelet down the pod does not answer: %q %v", body, err)
	}
	n.startKubelet()
	unchanged("a kubelet restart")

	if err := n.ctrd.restart(); err != nil {
		t.Fatal(err)
	}
	unchanged("a containerd restart")

	// The kubelet still works on the restarted containerd.
	if _, err := n.pods.Create(ctx, makePod("after").node(n.name).container("web", webImage).obj()); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, n.pods, "after", 60*time.Second, "Running", func(p *corev1.Pod) bool { return p.GetStatus().GetPhase() == "Running" })
	if p.GetStatus().GetPodIp() == ip || p.GetStatus().GetPodIp() == "" {
		t.Fatalf("new pod got IP %q (the old pod has %s)", p.GetStatus().GetPodIp(), ip)
	}
}
