package cri

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"

	"podline.dev/services/kubelet/internal/runtime"
)

var noDeadline = time.Now().Add(time.Hour)

var pod = runtime.PodRef{UID: "u1", Name: "web", Namespace: "shop"}

func sandboxCfg() *runtime.SandboxConfig {
	return &runtime.SandboxConfig{
		Pod: pod, Hostname: "web", Attempt: 1, LogDir: "/var/log/pods/shop_web_u1",
		DNS:    &runtime.DNSConfig{Servers: []string{"10.96.0.10"}, Searches: []string{"shop.svc.cluster.local"}, Options: []string{"ndots:5"}},
		Ports:  []runtime.PortMapping{{Protocol: "UDP", ContainerPort: 53, HostPort: 5353}},
		Labels: map[string]string{"app": "web"}, CgroupParent: "/kubepods/podu1",
	}
}

func TestRunPodSandboxSendsTheWholeConfigAndReadsTheIPFromItsStatus(t *testing.T) {
	f := newFakeCRI(t)
	rt := startFake(t, f)
	ctx := context.Background()
	sb, err := rt.RunPodSandbox(ctx, sandboxCfg())
	if err != nil {
		t.Fatal(err)
	}
	if sb.State != runtime.SandboxReady || !slices.Equal(sb.IPs, []string{"10.88.0.1"}) || sb.Pod != pod || sb.Attempt != 1 || sb.HostNetwork {
		t.Fatalf("sandbox %+v", sb)
	}
	c := f.sbConfigs[sb.ID]
	if c.GetHostname() != "web" || c.GetLogDirectory() != "/var/log/pods/shop_web_u1" || c.GetMetadata().GetUid() != "u1" ||
		c.GetDnsConfig().GetServers()[0] != "10.96.0.10" || c.GetDnsConfig().GetOptions()[0] != "ndots:5" ||
		c.GetPortMappings()[0].GetProtocol() != criv1.Protocol_UDP || c.GetPortMappings()[0].GetHostPort() != 5353 ||
		c.GetLabels()["app"] != "web" || c.GetLabels()[runtime.LabelPodUID] != "u1" || c.GetLinux().GetCgroupParent() != "/kubepods/podu1" ||
		c.GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork() != criv1.NamespaceMode_POD {
		t.Fatalf("config %v", c)
	}

	host := sandboxCfg()
	host.HostNetwork = true
	hsb, err := rt.RunPodSandbox(ctx, host)
	if err != nil || !hsb.HostNetwork || len(hsb.IPs) != 0 {
		t.Fatalf("host-network sandbox %+v %v", hsb, err)
	}
	if f.sbConfigs[hsb.ID].GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork() != criv1.NamespaceMode_NODE {
		t.Fatal("host network not asked for")
	}

	// A sandbox someone else made (no pod UID label) is not listed.
	f.mu.Lock()
	f.sandboxes["other"] = &criv1.PodSandboxStatus{Id: "other", Metadata: &criv1.PodSandboxMetadata{Name: "x"}}
	f.mu.Unlock()
	sbs, err := rt.ListPodSandboxes(ctx, "")
	if err != nil || len(sbs) != 2 {
		t.Fatalf("list %v %v", sbs, err)
	}
	if err := rt.StopPodSandbox(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	sbs, _ = rt.ListPodSandboxes(ctx, "u1")
	for _, s := range sbs {
		if s.ID == sb.ID && s.State != runtime.SandboxNotReady {
			t.Fatalf("stopped sandbox %+v", s)
		}
	}
	if err := rt.StopPodSandbox(ctx, "gone"); err != nil {
		t.Fatalf("stopping a missing sandbox: %v", err)
	}
}

func TestContainersCarryTheirHashAttemptAndInitThroughCRI(t *testing.T) {
	f := newFakeCRI(t)
	rt := startFake(t, f)
	ctx := context.Background()
	sb, _ := rt.RunPodSandbox(ctx, sandboxCfg())
	cfg := &runtime.ContainerConfig{Name: "app", Image: "img:1", Attempt: 2, Init: true, Hash: "abc", LogPath: "app/2.log",
		Env: []string{"A=b=c"}, Mounts: []runtime.Mount{{HostPath: "/h", ContainerPath: "/c", ReadOnly: true}}, Sandbox: sandboxCfg()}
	if _, err := rt.CreateContainer(ctx, sb, cfg); !errors.Is(err, runtime.ErrImageNotPresent) {
		t.Fatalf("create without the image: %v", err)
	}
	if _, err := rt.PullImage(ctx, "img:1"); err != nil {
		t.Fatal(err)
	}
	id, err := rt.CreateContainer(ctx, sb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	cs, err := rt.ListContainers(ctx, "u1")
	if err != nil || len(cs) != 1 {
		t.Fatalf("list %v %v", cs, err)
	}
	c := cs[0]
	if c.Name != "app" || c.Attempt != 2 || !c.Init || c.Hash != "abc" || c.Image != "img:1" || c.SandboxID != sb.ID ||
		c.State != runtime.ContainerRunning || c.StartedAt.IsZero() || c.LogPath != "/var/log/pods/shop_web_u1/app/2.log" || c.Pod != pod {
		t.Fatalf("container %+v", c)
	}
	res, err := rt.ExecSync(ctx, id, []string{"echo", "hi"}, time.Second)
	if err != nil || string(res.Stdout) != "echo hi" || res.ExitCode != 2 {
		t.Fatalf("exec sync %+v %v", res, err)
	}
	if err := rt.StopContainer(ctx, id, time.Second); err != nil {
		t.Fatal(err)
	}
	cs, _ = rt.ListContainers(ctx, "u1")
	if cs[0].State != runtime.ContainerExited || cs[0].ExitCode != 137 || cs[0].FinishedAt.IsZero() || cs[0].Reason != "Error" {
		t.Fatalf("stopped container %+v", cs[0])
	}
	if _, err := rt.ExecSync(ctx, id, []string{"true"}, time.Second); !errors.Is(err, runtime.ErrNotRunning) {
		t.Fatalf("exec in a stopped container: %v", err)
	}
	if err := rt.StopContainer(ctx, "gone", time.Second); err != nil {
		t.Fatalf("stopping a missing container: %v", err)
	}
}

func TestStatusReportsTheNetworkNotReady(t *testing.T) {
	f := newFakeCRI(t)
	rt := startFake(t, f)
	if err := rt.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.networkDown = true
	err := rt.Status(context.Background())
	if !errors.Is(err, runtime.ErrNetworkNotReady) || !strings.Contains(err.Error(), "NetworkReady=false reason:NetworkPluginNotReady message:cni plugin not initialized") {
		t.Fatalf("status %v", err)
	}
}

func TestExecPipesTheStreamsThroughTheStreamingServer(t *testing.T) {
	f := newFakeCRI(t)
	rt := startFake(t, f)
	var out bytes.Buffer
	code, err := rt.Exec(context.Background(), "c1", runtime.ExecOptions{Cmd: []string{"cat"}, Stdin: strings.NewReader("hello"), Stdout: &out})
	if err != nil || code != 3 || out.String() != "hello" {
		t.Fatalf("exec: %q %d %v", out.String(), code, err)
	}
}

func TestPortForwardCopiesBetweenTheStreamAndThePort(t *testing.T) {
	f := newFakeCRI(t)
	rt := startFake(t, f)
	local, remote := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- rt.PortForward(context.Background(), "sb1", 8080, remote) }()
	if _, err := local.Write([]byte("hello bye")); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(local)
	if err != nil || string(got) != "HELLO BYE" {
		t.Fatalf("forwarded %q %v", got, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestTheTraceContextGoesToTheRuntime(t *testing.T) {
	otel.SetTextMapPropagator(propagation.TraceContext{})
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	f := newFakeCRI(t)
	rt := startFake(t, f)
	ctx, span := tp.Tracer("test").Start(context.Background(), "sync")
	_, err := rt.RunPodSandbox(ctx, sandboxCfg())
	span.End()
	if err != nil {
		t.Fatal(err)
	}
	tid := span.SpanContext().TraceID().String()
	if len(f.traceparent) == 0 || !strings.Contains(f.traceparent[0], tid) {
		t.Fatalf("traceparent %v, want trace %s", f.traceparent, tid)
	}
}
