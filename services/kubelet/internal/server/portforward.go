package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"time"

	"k8s.io/cri-streaming/pkg/streaming/portforward"
	"k8s.io/streaming/pkg/httpstream/wsstream"

	"podline.dev/services/kubelet/internal/runtime"
)

// Kubernetes' kubelet closes a streaming connection idle this long
// (--streaming-connection-idle-timeout) and waits this long for the second
// stream of a forwarded connection's pair.
const (
	streamIdleTimeout     = 4 * time.Hour
	streamCreationTimeout = 30 * time.Second
)

// portForward serves /portForward/{namespace}/{pod}[/{uid}]: an SPDY
// upgrade (portforward.k8s.io) whose stream pairs each carry one forwarded
// connection to the port their header names, or the older WebSocket
// protocol (v4.channel.k8s.io, ports in the query). Either way each
// connection ends in the runtime's PortForward on the pod's ready sandbox.
func (s *Server) portForward(w http.ResponseWriter, r *http.Request) {
	namespace, name := r.PathValue("namespace"), r.PathValue("pod")
	pod, ok := s.pods.Pod(namespace, name)
	uid := pod.GetMetadata().GetUid()
	if !ok || (r.PathValue("uid") != "" && r.PathValue("uid") != uid) {
		httpError(w, fmt.Errorf("%w: pod %s/%s", errNotFound, namespace, name))
		return
	}
	if _, err := s.readySandbox(r.Context(), uid); err != nil {
		httpError(w, err)
		return
	}
	var opts *portforward.V4Options
	if wsstream.IsWebSocketRequest(r) {
		var err error
		if opts, err = portforward.NewV4Options(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	s.log.Info("port forward", "pod", namespace+"/"+name, "websocket", opts != nil)
	fw := &podForwarder{server: s, namespace: namespace}
	portforward.ServePortForward(w, r, fw, name, uid, opts, streamIdleTimeout, streamCreationTimeout, portforward.SupportedProtocols)
}

// podForwarder hands each forwarded connection to the runtime.
type podForwarder struct {
	server    *Server
	namespace string
}

var _ portforward.PortForwarder = (*podForwarder)(nil)

// PortForward looks the sandbox up again for each connection: the pod's
// sandbox may have been replaced since the upgrade.
func (f *podForwarder) PortForward(ctx context.Context, name, uid string, port int32, stream io.ReadWriteCloser) error {
	sb, err := f.server.readySandbox(ctx, uid)
	if err != nil {
		stream.Close()
		return err
	}
	f.server.log.Debug("port forward connection", "pod", f.namespace+"/"+name, "sandbox", sb.ID, "port", port)
	return f.server.runtime.PortForward(ctx, sb.ID, port, stream)
}

// readySandbox is the pod's newest ready sandbox.
func (s *Server) readySandbox(ctx context.Context, uid string) (*runtime.Sandbox, error) {
	sbs, err := s.runtime.ListPodSandboxes(ctx, uid)
	if err != nil {
		return nil, err
	}
	sort.Slice(sbs, func(i, j int) bool { return sbs[i].Attempt > sbs[j].Attempt })
	for _, sb := range sbs {
		if sb.State == runtime.SandboxReady {
			return sb, nil
		}
	}
	return nil, fmt.Errorf("pod with uid %s has no ready sandbox: %w", uid, runtime.ErrSandboxNotReady)
}
