package containerd

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"

	"podline.dev/services/kubelet/internal/runtime"
)

// portForwardDialTimeout bounds the connect to the pod's port.
const portForwardDialTimeout = 10 * time.Second

// PortForward dials 127.0.0.1:port inside the sandbox's network namespace
// and splices stream to it. The socket is created on an OS thread that has
// entered the namespace (ns.WithNetNSPath locks the goroutine to its
// thread for the call and restores the thread's namespace after), so it
// belongs to the pod's network; once connected it is used from anywhere.
func (r *Runtime) PortForward(ctx context.Context, podSandboxID string, port int32, stream io.ReadWriteCloser) error {
	conn, err := r.dialSandbox(ctx, podSandboxID, port)
	if err != nil {
		stream.Close()
		return err
	}
	return runtime.Splice(ctx, stream, conn)
}

func (r *Runtime) dialSandbox(ctx context.Context, id string, port int32) (net.Conn, error) {
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		return nil, notFound(err, "sandbox "+id)
	}
	labels, err := c.Labels(ctx)
	if err != nil {
		return nil, err
	}
	if labels[runtime.LabelKind] != runtime.KindSandbox {
		return nil, fmt.Errorf("sandbox %s: %w", id, runtime.ErrNotFound)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port)))
	d := net.Dialer{Timeout: portForwardDialTimeout}
	path := labels[runtime.LabelNetNS]
	if labels[runtime.LabelHostNetwork] == "true" || path == "" {
		return d.DialContext(ctx, "tcp", addr)
	}
	conn, err := dialInNetNS(ctx, path, addr)
	if err != nil {
		if _, ok := err.(ns.NSPathNotExistErr); ok {
			return nil, fmt.Errorf("sandbox %s: %w", id, runtime.ErrSandboxNotReady)
		}
		return nil, fmt.Errorf("dial %s in the network namespace of sandbox %s: %w", addr, id, err)
	}
	return conn, nil
}

// dialInNetNS connects to addr from inside the network namespace pinned at
// path.
func dialInNetNS(ctx context.Context, path, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: portForwardDialTimeout}
	var conn net.Conn
	err := ns.WithNetNSPath(path, func(ns.NetNS) error {
		var derr error
		conn, derr = d.DialContext(ctx, "tcp", addr)
		return derr
	})
	return conn, err
}
