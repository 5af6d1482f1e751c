package test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/kubelet/internal/nodestatus"
	"podline.dev/services/kubelet/internal/resource"
	"podline.dev/services/kubelet/internal/runtime"
)

const webImage = "registry.podline:5000/demo/web:1.0"

func TestNodeRegistersWithCapacityTaintsAndALease(t *testing.T) {
	taints, _ := nodestatus.ParseTaints("node-role.kubernetes.io/control-plane:NoSchedule")
	n := startFakeNode(t, nil, fakeOpts{taints: taints, capacity: resource.List{resource.CPU: 2000, resource.Memory: 4 << 30, resource.Pods: 110}})
	nodes, leases := client.Nodes(n.api.Conn), client.Leases(n.api.Conn)
	var node *corev1.Node
	eventually(t, 10*time.Second, "node registered", func() (bool, string) {
		got, err := nodes.Get(context.Background(), "", nodeName)
		if err != nil {
			return false, err.Error()
		}
		node = got
		return true, ""
	})
	if got := node.GetStatus().GetAllocatable(); got["cpu"] != "2" || got["memory"] != "4Gi" || got["pods"] != "110" {
		t.Fatalf("allocatable %v", got)
	}
	if tt := node.GetSpec().GetTaints(); len(tt) != 1 || tt[0].GetKey() != "node-role.kubernetes.io/control-plane" || tt[0].GetEffect() != "NoSchedule" {
		t.Fatalf("taints %v", tt)
	}
	if node.GetSpec().GetPodCidr() != "10.244.1.0/24" {
		t.Fatalf("podCIDR %q", node.GetSpec().GetPodCidr())
	}
	conds := map[string]string{}
	for _, c := range node.GetStatus().GetConditions() {
		conds[c.GetType()] = c.GetStatus()
	}
	want := map[string]string{"Ready": "True", "MemoryPressure": "False", "DiskPressure": "False", "PIDPressure": "False"}
	for k, v := range want {
		if conds[k] != v {
			t.Fatalf("conditions %v, want %v", conds, want)
		}
	}
	var names []string
	for _, img := range node.GetStatus().GetImages() {
		names = append(names, img.GetNames()...)
	}
	if !slices.Contains(names, webImage) {
		t.Fatalf("images %v lack %s", names, webImage)
	}
	if a := node.GetStatus().GetAddresses(); len(a) != 2 || a[0].GetType() != "InternalIP" || a[0].GetAddress() != "172.18.0.3" {
		t.Fatalf("addresses %v", a)
	}

	var first *metav1.MicroTime
	eventually(t, 10*time.Second, "lease renewed", func() (bool, string) {
		l, err := leases.Get(context.Background(), "kube-node-lease", nodeName)
		if err != nil {
			return false, err.Error()
		}
		if l.GetSpec().GetHolderIdentity() != nodeName || l.GetSpec().GetLeaseDurationSeconds() != 40 {
			t.Fatalf("lease spec %v", l.GetSpec())
		}
		if first == nil {
			first = l.GetSpec().GetRenewTime()
			return false, "first renewal seen"
		}
		return !proto.Equal(first, l.GetSpec().GetRenewTime()), "not renewed yet"
	})
}

func TestPodRunsThroughItsLifecycleOnTheFakeRuntime(t *testing.T) {
	n := startFakeNode(t, nil, fakeOpts{})
	var ready atomic.Bool
	n.runtime.SetExecFunc(func(c *runtime.Container, cmd []string) (*runtime.ExecResult, error) {
		if ready.Load() {
			return &runtime.ExecResult{}, nil
		}
		return &runtime.ExecResult{ExitCode: 1, Stdout: []byte("cat: can't open '/ready'")}, nil
	})
	pod := makePod("web").node(nodeName).
		initContainer("init", webImage, "true").
		container("web", webImage).port(8080).env("GREETING", "hi $(POD)").
		readiness(execProbe("cat", "/ready"), 1).obj()
	if _, err := n.pods.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	// The init container runs first, alone.
	eventually(t, 10*time.Second, "init container started", func() (bool, string) {
		return len(n.runtime.Running("init")) == 1, strings.Join(n.runtime.Calls(), ",")
	})
	if len(n.runtime.Running("web")) != 0 {
		t.Fatal("web started before init finished")
	}
	p := waitPod(t, n.pods, "web", 10*time.Second, "Pending and not initialized", func(p *corev1.Pod) bool {
		return p.GetStatus().GetPhase() == "Pending" && condition(p, "Initialized") == "False"
	})
	if p.GetStatus().GetPodIp() == "" || p.GetStatus().GetHostIp() != "172.18.0.3" || p.GetStatus().GetStartTime() == nil {
		t.Fatalf("pending status lacks IPs or start time: %v", p.GetStatus())
	}
	n.runtime.Exit(n.runtime.Running("init")[0], 0)

	// Then web runs, not ready until its readiness probe passes.
	p = waitPod(t, n.pods, "web", 10*time.Second, "Running, initialized, not ready", func(p *corev1.Pod) bool {
		return p.GetStatus().GetPhase() == "Running" && condition(p, "Initialized") == "True" && condition(p, "Ready") == "False"
	})
	cs := p.GetStatus().GetContainerStatuses()[0]
	if !strings.HasPrefix(cs.GetContainerId(), "containerd://") || cs.GetImageId() == "" || cs.GetState().GetRunning() == nil {
		t.Fatalf("container status %v", cs)
	}
	eventually(t, 10*time.Second, "readiness probe failed", func() (bool, string) {
		reasons := eventReasons(t, n, "web")
		return slices.Contains(reasons, "Unhealthy"), strings.Join(reasons, ",")
	})
	ready.Store(true)
	p = waitPod(t, n.pods, "web", 10*time.Second, "Ready", func(p *corev1.Pod) bool {
		return condition(p, "Ready") == "True" && condition(p, "ContainersReady") == "True" && condition(p, "PodScheduled") == "True"
	})

	// Graceful deletion: containers stop, the sandbox and its address go,
	// and the kubelet deletes the pod for good.
	if _, err := n.pods.Delete(context.Background(), "default", "web", nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "pod deleted", func() (bool, string) {
		_, err := n.pods.Get(context.Background(), "default", "web")
		return apierrors.IsNotFound(err), ""
	})
	sbs, _ := n.runtime.ListPodSandboxes(context.Background(), "")
	cs2, _ := n.runtime.ListContainers(context.Background(), "")
	if len(sbs) != 0 || len(cs2) != 0 || n.runtime.Attached() != 0 {
		t.Fatalf("left behind: %d sandboxes, %d containers, %d addresses", len(sbs), len(cs2), n.runtime.Attached())
	}
	eventually(t, 10*time.Second, "events recorded", func() (bool, string) {
		reasons := eventReasons(t, n, "web")
		for _, want := range []string{"Pulled", "Created", "Started", "Killing"} {
			if !slices.Contains(reasons, want) {
				return false, strings.Join(reasons, ",")
			}
		}
		return true, ""
	})
}

func eventReasons(t *testing.T, n *fakeNode, pod string) []string {
	evs, _, err := client.Events(n.api.Conn).List(context.Background(), &metav1.ListRequest{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		if e.GetInvolvedObject().GetName() == pod {
			if e.GetSource().GetComponent() != "kubelet" || e.GetSource().GetHost() != nodeName {
				t.Fatalf("event source %v", e.GetSource())
			}
			out = append(out, e.GetReason())
		}
	}
	return out
}

func TestACrashingContainerBacksOffAndALivenessFailureRestartsIt(t *testing.T) {
	n := startFakeNode(t, nil, fakeOpts{})
	pod := makePod("crash").node(nodeName).container("app", webImage).liveness(execProbe("check"), 1, 1).obj()
	if _, err := n.pods.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "app running", func() (bool, string) { return len(n.runtime.Running("app")) == 1, "" })
	n.runtime.Exit(n.runtime.Running("app")[0], 2)

	// The first restart is immediate; the next waits in CrashLoopBackOff.
	eventually(t, 10*time.Second, "restarted once", func() (bool, string) { return len(n.runtime.Running("app")) == 1, "" })
	n.runtime.Exit(n.runtime.Running("app")[0], 2)
	p := waitPod(t, n.pods, "crash", 10*time.Second, "CrashLoopBackOff", func(p *corev1.Pod) bool {
		cs := p.GetStatus().GetContainerStatuses()
		return len(cs) == 1 && cs[0].GetState().GetWaiting().GetReason() == "CrashLoopBackOff"
	})
	cs := p.GetStatus().GetContainerStatuses()[0]
	if cs.GetRestartCount() != 1 || cs.GetLastState().GetTerminated().GetExitCode() != 2 ||
		!strings.Contains(cs.GetState().GetWaiting().GetMessage(), "back-off 10s") {
		t.Fatalf("status in backoff: %v", cs)
	}
	if p.GetStatus().GetPhase() != "Running" {
		t.Fatalf("phase %s, want Running (restartPolicy Always)", p.GetStatus().GetPhase())
	}

	// A liveness failure on a fresh pod kills and restarts its container.
	live := makePod("live").node(nodeName).container("svc", webImage).liveness(execProbe("check"), 1, 1).obj()
	n.runtime.SetExecFunc(func(c *runtime.Container, cmd []string) (*runtime.ExecResult, error) {
		if c.Name == "svc" && c.Attempt == 0 {
			return &runtime.ExecResult{ExitCode: 1, Stdout: []byte("unhealthy")}, nil
		}
		return &runtime.ExecResult{}, nil
	})
	if _, err := n.pods.Create(context.Background(), live); err != nil {
		t.Fatal(err)
	}
	p = waitPod(t, n.pods, "live", 10*time.Second, "restarted after a liveness failure", func(p *corev1.Pod) bool {
		cs := p.GetStatus().GetContainerStatuses()
		return len(cs) == 1 && cs[0].GetRestartCount() == 1 && cs[0].GetState().GetRunning() != nil
	})
	if lt := p.GetStatus().GetContainerStatuses()[0].GetLastState().GetTerminated(); lt == nil {
		t.Fatalf("no last state after the restart: %v", p.GetStatus().GetContainerStatuses()[0])
	}
}

func TestAPodThatDoesNotFitIsRejected(t *testing.T) {
	n := startFakeNode(t, nil, fakeOpts{capacity: resource.List{resource.CPU: 1000, resource.Memory: 1 << 30, resource.Pods: 110}})
	big := makePod("big").node(nodeName).container("c", webImage).requests("2", "64Mi").obj()
	if _, err := n.pods.Create(context.Background(), big); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, n.pods, "big", 10*time.Second, "rejected", func(p *corev1.Pod) bool { return p.GetStatus().GetPhase() == "Failed" })
	if p.GetStatus().GetReason() != "OutOfcpu" || !strings.HasPrefix(p.GetStatus().GetMessage(), "Pod was rejected:") {
		t.Fatalf("status %v", p.GetStatus())
	}
	if calls := n.runtime.Calls(); slices.ContainsFunc(calls, func(c string) bool { return strings.Contains(c, "big") }) {
		t.Fatalf("a rejected pod reached the runtime: %v", calls)
	}

	a := makePod("a").node(nodeName).container("c", webImage).hostPort(8080).obj()
	b := makePod("b").node(nodeName).container("c", webImage).hostPort(8080).obj()
	if _, err := n.pods.Create(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	waitPod(t, n.pods, "a", 10*time.Second, "Running", func(p *corev1.Pod) bool { return p.GetStatus().GetPhase() == "Running" })
	if _, err := n.pods.Create(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	p = waitPod(t, n.pods, "b", 10*time.Second, "rejected", func(p *corev1.Pod) bool { return p.GetStatus().GetPhase() == "Failed" })
	if p.GetStatus().GetReason() != "NodePorts" {
		t.Fatalf("status %v", p.GetStatus())
	}
}

func TestAnImageThatCannotBePulledBacksOff(t *testing.T) {
	n := startFakeNode(t, nil, fakeOpts{})
	n.runtime.SetPullErr(func(ref string) error {
		if strings.Contains(ref, "missing") {
			return apierrors.NewNotFound(apierrors.GroupResource{Resource: "images"}, ref)
		}
		return nil
	})
	pod := makePod("nope").node(nodeName).container("c", "registry.podline:5000/missing:1").obj()
	if _, err := n.pods.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	waitPod(t, n.pods, "nope", 10*time.Second, "ImagePullBackOff", func(p *corev1.Pod) bool {
		cs := p.GetStatus().GetContainerStatuses()
		return len(cs) == 1 && cs[0].GetState().GetWaiting().GetReason() == "ImagePullBackOff" && p.GetStatus().GetPhase() == "Pending"
	})
	reasons := eventReasons(t, n, "nope")
	for _, want := range []string{"Pulling", "Failed", "BackOff"} {
		if !slices.Contains(reasons, want) {
			t.Fatalf("events %v lack %s", reasons, want)
		}
	}
	if pulls := slices.DeleteFunc(n.runtime.Calls(), func(c string) bool { return !strings.HasPrefix(c, "PullImage") }); len(pulls) != 1 {
		t.Fatalf("pulled %d times within the backoff", len(pulls))
	}
}

func TestStatusIsWrittenOnlyWhenItChanges(t *testing.T) {
	n := startFakeNode(t, nil, fakeOpts{})
	if _, err := n.pods.Create(context.Background(), makePod("calm").node(nodeName).container("c", webImage).obj()); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, n.pods, "calm", 10*time.Second, "Ready", func(p *corev1.Pod) bool { return condition(p, "Ready") == "True" })
	writes := n.kl.StatusManager().Writes()
	time.Sleep(1500 * time.Millisecond) // three resyncs
	after, err := n.pods.Get(context.Background(), "default", "calm")
	if err != nil {
		t.Fatal(err)
	}
	if after.GetMetadata().GetResourceVersion() != p.GetMetadata().GetResourceVersion() || n.kl.StatusManager().Writes() != writes {
		t.Fatalf("status rewritten without a change: rv %s -> %s, writes %d -> %d",
			p.GetMetadata().GetResourceVersion(), after.GetMetadata().GetResourceVersion(), writes, n.kl.StatusManager().Writes())
	}
}

func TestAHostNetworkPodHasTheNodesAddressAndNoCNI(t *testing.T) {
	n := startFakeNode(t, nil, fakeOpts{})
	pod := makePod("hostnet").node(nodeName).container("c", webImage).obj()
	pod.Spec.HostNetwork = true
	if _, err := n.pods.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, n.pods, "hostnet", 10*time.Second, "Ready", func(p *corev1.Pod) bool { return condition(p, "Ready") == "True" })
	if p.GetStatus().GetPodIp() != "172.18.0.3" || p.GetStatus().GetHostIp() != "172.18.0.3" {
		t.Fatalf("podIP %s hostIP %s", p.GetStatus().GetPodIp(), p.GetStatus().GetHostIp())
	}
	if adds, _ := n.runtime.NetworkCalls(); adds != 0 {
		t.Fatalf("CNI ADD ran %d times for a host-network pod", adds)
	}
}
