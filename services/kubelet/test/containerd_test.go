package test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/watch"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/kubelet/internal/runtime"
)

// runtimeObjects counts what containerd holds for a pod.
func (n *realNode) runtimeObjects(t *testing.T, uid string) (sandboxes, containers int) {
	t.Helper()
	cs, err := n.ctrd.client.Containers(context.Background(), fmt.Sprintf(`labels.%q==%s`, runtime.LabelPodUID, uid))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		l, _ := c.Labels(context.Background())
		if l[criKindLabel] == "sandbox" {
			sandboxes++
		} else {
			containers++
		}
	}
	return sandboxes, containers
}

func TestContainerdPodGetsAnIPServesAndGoesAway(t *testing.T) {
	n := startRealNode(t)
	t.Logf("images: %s", strings.Join(n.ctrd.imagesFrom, "; "))
	ctx := ctxFor(t, 2*time.Minute)

	w, err := n.pods.Watch(ctx, &metav1.ListRequest{Namespace: "default", FieldSelector: "metadata.name=web"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	pod := makePod("web").node(n.name).
		initContainer("init", webImage, "sleep", "1").
		container("web", webImage).port(8080).env("POD_NAME", "web").
		readiness(httpGet("/healthz", 8080), 1).obj()
	if _, err := n.pods.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}

	// Watch the status go Pending (initializing) then Running and Ready.
	var phases []string
	var ready *corev1.Pod
	deadline := time.After(60 * time.Second)
	for ready == nil {
		select {
		case ev := <-w.ResultChan():
			if ev.Type == watch.Error {
				t.Fatalf("watch: %v", ev.Err)
			}
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			if ph := p.GetStatus().GetPhase(); len(phases) == 0 || phases[len(phases)-1] != ph {
				phases = append(phases, ph)
			}
			if p.GetStatus().GetPhase() == "Pending" && condition(p, "Initialized") == "False" && p.GetStatus().GetPodIp() != "" {
				if init := p.GetStatus().GetInitContainerStatuses(); len(init) != 1 {
					t.Fatalf("init statuses %v", init)
				}
			}
			if condition(p, "Ready") == "True" {
				ready = p
			}
		case <-deadline:
			t.Fatalf("not Ready within 60s; phases %v", phases)
		}
	}
	if strings.Join(phases, ",") != "Pending,Running" {
		t.Fatalf("phases %v, want Pending then Running", phases)
	}
	st := ready.GetStatus()
	for _, c := range []string{"PodScheduled", "Initialized", "ContainersReady", "Ready", "PodReadyToStartContainers"} {
		if condition(ready, c) != "True" {
			t.Fatalf("condition %s is %q: %s", c, condition(ready, c), describe(ready))
		}
	}
	ip, err := netip.ParseAddr(st.GetPodIp())
	if err != nil || !netip.MustParsePrefix(n.podCIDR).Contains(ip) || len(st.GetPodIps()) != 1 || st.GetHostIp() != n.gateway {
		t.Fatalf("podIP %q podIPs %v hostIP %q, want an address in %s", st.GetPodIp(), st.GetPodIps(), st.GetHostIp(), n.podCIDR)
	}
	cs := st.GetContainerStatuses()[0]
	if !strings.HasPrefix(cs.GetContainerId(), "containerd://") || !strings.Contains(cs.GetImageId(), "sha256:") ||
		!cs.GetReady() || cs.GetRestartCount() != 0 || cs.GetState().GetRunning() == nil {
		t.Fatalf("container status %v", cs)
	}
	if init := st.GetInitContainerStatuses()[0]; init.GetState().GetTerminated().GetExitCode() != 0 || init.GetState().GetTerminated().GetReason() != "Completed" {
		t.Fatalf("init container status %v", init)
	}

	// Its port answers from the node's network namespace.
	body, err := n.get("http://" + st.GetPodIp() + ":8080/")
	if err != nil || !strings.Contains(body, "hello from web at "+st.GetPodIp()) {
		t.Fatalf("GET / = %q, %v", body, err)
	}

	// Deletion stops it, releases its address and removes its sandbox.
	uid := ready.GetMetadata().GetUid()
	if sb, c := n.runtimeObjects(t, uid); sb != 1 || c != 2 {
		t.Fatalf("containerd holds %d sandboxes and %d containers for the pod", sb, c)
	}
	ipamFile := filepath.Join(n.ctrd.dir, "ipam", "podline-test", st.GetPodIp())
	if _, err := os.Stat(ipamFile); err != nil {
		t.Fatalf("no IPAM reservation for %s: %v", st.GetPodIp(), err)
	}
	if _, err := n.pods.Delete(ctx, "default", "web", nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "pod deleted", func() (bool, string) {
		_, err := n.pods.Get(ctx, "default", "web")
		return apierrors.IsNotFound(err), ""
	})
	if sb, c := n.runtimeObjects(t, uid); sb != 0 || c != 0 {
		t.Fatalf("after deletion containerd holds %d sandboxes and %d containers", sb, c)
	}
	if _, err := os.Stat(ipamFile); !os.IsNotExist(err) {
		t.Fatalf("address %s still reserved: %v", st.GetPodIp(), err)
	}
	if _, err := n.get("http://" + st.GetPodIp() + ":8080/"); err == nil {
		t.Fatal("the deleted pod still answers")
	}
}

func TestContainerdFailingLivenessRestartsTheContainer(t *testing.T) {
	n := startRealNode(t)
	ctx := ctxFor(t, 2*time.Minute)
	pod := makePod("sick").node(n.name).container("web", webImage).port(8080).
		liveness(httpGet("/nope", 8080), 1, 1).obj()
	if _, err := n.pods.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	var ids []string
	p := waitPod(t, n.pods, "sick", 60*time.Second, "restartCount rising to 2", func(p *corev1.Pod) bool {
		cs := p.GetStatus().GetContainerStatuses()
		if len(cs) == 1 && cs[0].GetContainerId() != "" && (len(ids) == 0 || ids[len(ids)-1] != cs[0].GetContainerId()) {
			ids = append(ids, cs[0].GetContainerId())
		}
		return len(cs) == 1 && cs[0].GetRestartCount() >= 2
	})
	cs := p.GetStatus().GetContainerStatuses()[0]
	if cs.GetLastState().GetTerminated() == nil {
		t.Fatalf("no last state: %v", cs)
	}
	if len(ids) < 2 {
		t.Fatalf("container IDs seen %v: the container was not replaced", ids)
	}
	reasons := eventReasonsOf(t, n, "sick")
	for _, want := range []string{"Unhealthy", "Killing", "Started"} {
		if !strings.Contains(strings.Join(reasons, ","), want) {
			t.Fatalf("events %v lack %s", reasons, want)
		}
	}
}

func eventReasonsOf(t *testing.T, n *realNode, pod string) []string {
	t.Helper()
	var out []string
	eventually(t, 10*time.Second, "events", func() (bool, string) {
		evs, _, err := eventsClient(n).List(context.Background(), &metav1.ListRequest{Namespace: "default"})
		if err != nil {
			return false, err.Error()
		}
		out = out[:0]
		for _, e := range evs {
			if e.GetInvolvedObject().GetName() == pod {
				out = append(out, e.GetReason())
			}
		}
		return len(out) > 0, ""
	})
	return out
}
