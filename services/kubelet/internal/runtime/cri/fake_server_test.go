package cri

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/websocket"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fakeCRI is an in-memory CRI runtime and image service: sandboxes get
// 10.88.0.N, containers run until stopped, exec and port-forward URLs
// point at a WebSocket streaming server of its own.
type fakeCRI struct {
	criv1.UnimplementedRuntimeServiceServer
	criv1.UnimplementedImageServiceServer

	mu          sync.Mutex
	seq         int
	sandboxes   map[string]*criv1.PodSandboxStatus
	sbConfigs   map[string]*criv1.PodSandboxConfig
	containers  map[string]*criv1.ContainerStatus
	sandboxOf   map[string]string
	images      map[string]*criv1.Image
	networkDown bool
	traceparent []string
	stream      *httptest.Server
}

func newFakeCRI(t *testing.T) *fakeCRI {
	f := &fakeCRI{
		sandboxes: map[string]*criv1.PodSandboxStatus{}, sbConfigs: map[string]*criv1.PodSandboxConfig{},
		containers: map[string]*criv1.ContainerStatus{}, sandboxOf: map[string]string{}, images: map[string]*criv1.Image{},
	}
	f.stream = httptest.NewServer(http.HandlerFunc(f.serveStream))
	t.Cleanup(f.stream.Close)
	return f
}

func (f *fakeCRI) noteTrace(ctx context.Context) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	f.traceparent = append(f.traceparent, md.Get("traceparent")...)
	f.mu.Unlock()
}

func (f *fakeCRI) Version(context.Context, *criv1.VersionRequest) (*criv1.VersionResponse, error) {
	return &criv1.VersionResponse{RuntimeName: "fake", RuntimeVersion: "1.0"}, nil
}

func (f *fakeCRI) Status(context.Context, *criv1.StatusRequest) (*criv1.StatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	net := &criv1.RuntimeCondition{Type: criv1.NetworkReady, Status: true}
	if f.networkDown {
		net = &criv1.RuntimeCondition{Type: criv1.NetworkReady, Reason: "NetworkPluginNotReady", Message: "cni plugin not initialized"}
	}
	return &criv1.StatusResponse{Status: &criv1.RuntimeStatus{Conditions: []*criv1.RuntimeCondition{{Type: criv1.RuntimeReady, Status: true}, net}}}, nil
}

func (f *fakeCRI) RunPodSandbox(ctx context.Context, req *criv1.RunPodSandboxRequest) (*criv1.RunPodSandboxResponse, error) {
	f.noteTrace(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	id := fmt.Sprintf("sb%d", f.seq)
	c := req.GetConfig()
	st := &criv1.PodSandboxStatus{Id: id, Metadata: c.GetMetadata(), State: criv1.PodSandboxState_SANDBOX_READY, CreatedAt: int64(f.seq),
		Labels: c.GetLabels(), Annotations: c.GetAnnotations(),
		Linux: &criv1.LinuxPodSandboxStatus{Namespaces: &criv1.Namespace{Options: c.GetLinux().GetSecurityContext().GetNamespaceOptions()}}}
	if c.GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork() != criv1.NamespaceMode_NODE {
		st.Network = &criv1.PodSandboxNetworkStatus{Ip: fmt.Sprintf("10.88.0.%d", f.seq)}
	}
	f.sandboxes[id], f.sbConfigs[id] = st, c
	return &criv1.RunPodSandboxResponse{PodSandboxId: id}, nil
}

func (f *fakeCRI) PodSandboxStatus(_ context.Context, req *criv1.PodSandboxStatusRequest) (*criv1.PodSandboxStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.sandboxes[req.GetPodSandboxId()]
	if st == nil {
		return nil, status.Error(codes.NotFound, "no such sandbox")
	}
	return &criv1.PodSandboxStatusResponse{Status: st}, nil
}

func (f *fakeCRI) StopPodSandbox(_ context.Context, req *criv1.StopPodSandboxRequest) (*criv1.StopPodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.sandboxes[req.GetPodSandboxId()]
	if st == nil {
		return nil, status.Error(codes.NotFound, "no such sandbox")
	}
	st.State = criv1.PodSandboxState_SANDBOX_NOTREADY
	return &criv1.StopPodSandboxResponse{}, nil
}

func (f *fakeCRI) RemovePodSandbox(_ context.Context, req *criv1.RemovePodSandboxRequest) (*criv1.RemovePodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.sandboxes, req.GetPodSandboxId())
	return &criv1.RemovePodSandboxResponse{}, nil
}

func matches(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func (f *fakeCRI) ListPodSandbox(_ context.Context, req *criv1.ListPodSandboxRequest) (*criv1.ListPodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*criv1.PodSandbox
	for _, st := range f.sandboxes {
		if matches(req.GetFilter().GetLabelSelector(), st.GetLabels()) {
			out = append(out, &criv1.PodSandbox{Id: st.Id, Metadata: st.Metadata, State: st.State, CreatedAt: st.CreatedAt, Labels: st.Labels})
		}
	}
	return &criv1.ListPodSandboxResponse{Items: out}, nil
}

func (f *fakeCRI) CreateContainer(_ context.Context, req *criv1.CreateContainerRequest) (*criv1.CreateContainerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.images[req.GetConfig().GetImage().GetImage()] == nil {
		return nil, status.Error(codes.NotFound, "image not found")
	}
	f.seq++
	id := fmt.Sprintf("c%d", f.seq)
	c := req.GetConfig()
	f.containers[id] = &criv1.ContainerStatus{Id: id, Metadata: c.GetMetadata(), State: criv1.ContainerState_CONTAINER_CREATED,
		CreatedAt: int64(f.seq), Image: c.GetImage(), ImageRef: f.images[c.GetImage().GetImage()].Id,
		Labels: c.GetLabels(), Annotations: c.GetAnnotations(), LogPath: req.GetSandboxConfig().GetLogDirectory() + "/" + c.GetLogPath()}
	f.sandboxOf[id] = req.GetPodSandboxId()
	return &criv1.CreateContainerResponse{ContainerId: id}, nil
}

func (f *fakeCRI) StartContainer(_ context.Context, req *criv1.StartContainerRequest) (*criv1.StartContainerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.containers[req.GetContainerId()]
	c.State, c.StartedAt = criv1.ContainerState_CONTAINER_RUNNING, 2e9
	return &criv1.StartContainerResponse{}, nil
}

func (f *fakeCRI) StopContainer(_ context.Context, req *criv1.StopContainerRequest) (*criv1.StopContainerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.containers[req.GetContainerId()]
	if c == nil {
		return nil, status.Error(codes.NotFound, "no such container")
	}
	c.State, c.FinishedAt, c.ExitCode, c.Reason = criv1.ContainerState_CONTAINER_EXITED, 3e9, 137, "Error"
	return &criv1.StopContainerResponse{}, nil
}

func (f *fakeCRI) ListContainers(_ context.Context, req *criv1.ListContainersRequest) (*criv1.ListContainersResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*criv1.Container
	for id, c := range f.containers {
		if matches(req.GetFilter().GetLabelSelector(), c.GetLabels()) {
			out = append(out, &criv1.Container{Id: id, PodSandboxId: f.sandboxOf[id], Metadata: c.Metadata, State: c.State, Labels: c.Labels})
		}
	}
	return &criv1.ListContainersResponse{Containers: out}, nil
}

func (f *fakeCRI) ContainerStatus(_ context.Context, req *criv1.ContainerStatusRequest) (*criv1.ContainerStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.containers[req.GetContainerId()]
	if c == nil {
		return nil, status.Error(codes.NotFound, "no such container")
	}
	return &criv1.ContainerStatusResponse{Status: c}, nil
}

func (f *fakeCRI) ExecSync(_ context.Context, req *criv1.ExecSyncRequest) (*criv1.ExecSyncResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.containers[req.GetContainerId()]
	if c == nil || c.State != criv1.ContainerState_CONTAINER_RUNNING {
		return nil, status.Error(codes.FailedPrecondition, "container is not running")
	}
	return &criv1.ExecSyncResponse{Stdout: []byte(strings.Join(req.GetCmd(), " ")), ExitCode: 2}, nil
}

func (f *fakeCRI) Exec(_ context.Context, req *criv1.ExecRequest) (*criv1.ExecResponse, error) {
	return &criv1.ExecResponse{Url: f.stream.URL + "/exec/" + req.GetCmd()[0]}, nil
}

func (f *fakeCRI) PortForward(_ context.Context, req *criv1.PortForwardRequest) (*criv1.PortForwardResponse, error) {
	return &criv1.PortForwardResponse{Url: f.stream.URL + "/portforward/" + req.GetPodSandboxId()}, nil
}

func (f *fakeCRI) PullImage(_ context.Context, req *criv1.PullImageRequest) (*criv1.PullImageResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ref := req.GetImage().GetImage()
	f.images[ref] = &criv1.Image{Id: "sha256:" + strings.Repeat("a", 64), RepoTags: []string{ref}, Size: 42}
	return &criv1.PullImageResponse{ImageRef: f.images[ref].Id}, nil
}

func (f *fakeCRI) ImageStatus(_ context.Context, req *criv1.ImageStatusRequest) (*criv1.ImageStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &criv1.ImageStatusResponse{Image: f.images[req.GetImage().GetImage()]}, nil
}

// serveStream is the streaming server: /exec/cat echoes stdin to stdout
// and ends with exit code 3; /portforward/<sandbox> echoes the port's
// data back, each channel's first frame prefixed by the port.
func (f *fakeCRI) serveStream(w http.ResponseWriter, r *http.Request) {
	up := websocket.Upgrader{Subprotocols: []string{protoV5, protoV4}}
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	send := func(ch byte, p []byte) { _ = conn.WriteMessage(websocket.BinaryMessage, append([]byte{ch}, p...)) }
	if strings.HasPrefix(r.URL.Path, "/portforward/") {
		port := make([]byte, 2)
		var p uint16
		_, _ = fmt.Sscan(r.URL.Query().Get("port"), &p)
		binary.LittleEndian.PutUint16(port, p)
		send(0, port)
		send(1, port)
		for {
			_, msg, err := conn.ReadMessage()
			if err != nil {
				return
			}
			if len(msg) > 1 && msg[0] == 0 {
				send(0, []byte(strings.ToUpper(string(msg[1:]))))
				if strings.Contains(string(msg[1:]), "bye") {
					_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), noDeadline)
					return
				}
			}
		}
	}
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			return
		}
		if len(msg) == 0 {
			continue
		}
		switch msg[0] {
		case chStdin:
			send(chStdout, msg[1:])
		case chClose:
			st, _ := json.Marshal(map[string]any{"status": "Failure", "reason": "NonZeroExitCode",
				"details": map[string]any{"causes": []map[string]string{{"reason": "ExitCode", "message": "3"}}}})
			send(chError, st)
			_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), noDeadline)
			return
		}
	}
}

// startFake serves f on a bufconn and returns a Runtime over it.
func startFake(t *testing.T, f *fakeCRI) *Runtime {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	criv1.RegisterRuntimeServiceServer(srv, f)
	criv1.RegisterImageServiceServer(srv, f)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	rt, err := New("unix:///fake/cri.sock", WithDialOptions(grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
		return lis.DialContext(ctx)
	})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}
