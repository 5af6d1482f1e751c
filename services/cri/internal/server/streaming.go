package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming"
	remotecommand "k8s.io/cri-streaming/pkg/streaming/remotecommand"
)

// newStreamServer listens on addr (a random port of 127.0.0.1 by
// default) and serves Exec, Attach and PortForward URLs from it.
func newStreamServer(s *Service, addr string) (streaming.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("streaming server: %w", err)
	}
	cfg := streaming.DefaultConfig
	cfg.Addr = ln.Addr().String()
	cfg.BaseURL = &url.URL{Scheme: "http", Host: ln.Addr().String()}
	srv, err := streaming.NewServer(cfg, &streamRuntime{s: s})
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	// Start listens on Addr itself: free the port just before it does.
	_ = ln.Close()
	go func() {
		if err := srv.Start(true); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("streaming server stopped", "err", err)
		}
	}()
	return srv, nil
}

// Exec returns the streaming server's URL for an exec.
func (s *Service) Exec(ctx context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	c, err := s.store.container(req.GetContainerId())
	if err != nil {
		return nil, toGRPC(err)
	}
	if err := s.requireRunning(c); err != nil {
		return nil, toGRPC(err)
	}
	r := proto.Clone(req).(*runtimeapi.ExecRequest)
	r.ContainerId = c.ID
	return s.stream.GetExec(r)
}

// Attach returns the streaming server's URL for an attach.
func (s *Service) Attach(ctx context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	c, err := s.store.container(req.GetContainerId())
	if err != nil {
		return nil, toGRPC(err)
	}
	if err := s.requireRunning(c); err != nil {
		return nil, toGRPC(err)
	}
	r := proto.Clone(req).(*runtimeapi.AttachRequest)
	r.ContainerId = c.ID
	return s.stream.GetAttach(r)
}

// PortForward returns the streaming server's URL for a port forward.
func (s *Service) PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	sb, err := s.store.sandbox(req.GetPodSandboxId())
	if err != nil {
		return nil, toGRPC(err)
	}
	r := proto.Clone(req).(*runtimeapi.PortForwardRequest)
	r.PodSandboxId = sb.ID
	return s.stream.GetPortForward(r)
}

func (s *Service) requireRunning(c *container) error {
	var st runtimeapi.ContainerState
	s.store.read(func() { st = c.State })
	if st != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return fmt.Errorf("container %s is %s: %w", c.ID, st, ErrNotRunning)
	}
	return nil
}

// streamRuntime runs what the streaming server's URLs ask for.
type streamRuntime struct{ s *Service }

func (r *streamRuntime) Exec(ctx context.Context, id string, cmd []string, in io.Reader, out, errw io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) error {
	o := execOptions{cmd: cmd, tty: tty, resize: resize}
	if in != nil {
		o.stdin = in
	}
	if out != nil {
		o.stdout = out
	}
	if errw != nil {
		o.stderr = errw
	}
	code, err := r.s.exec(r.s.ctx(ctx), id, o)
	if err != nil {
		return err
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// exitError is what the streaming server reports as the command's exit
// code (it reads ExitStatus).
type exitError struct{ code int }

func (e *exitError) Error() string {
	return fmt.Sprintf("command terminated with exit code %d", e.code)
}
func (e *exitError) String() string  { return e.Error() }
func (e *exitError) Exited() bool    { return true }
func (e *exitError) ExitStatus() int { return e.code }

// Attach joins the container's streams: output from now on, and input
// into its stdin when it keeps one.
func (r *streamRuntime) Attach(ctx context.Context, id string, in io.Reader, out, errw io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) error {
	c, err := r.s.store.container(id)
	if err != nil {
		return err
	}
	var cio *containerIO
	r.s.store.read(func() { cio = c.io })
	if cio == nil {
		return fmt.Errorf("container %s: %w", id, ErrNotRunning)
	}
	if out != nil {
		cio.stdout.add(out)
		defer cio.stdout.remove(out)
	}
	if errw != nil && !cio.tty {
		cio.stderr.add(errw)
		defer cio.stderr.remove(errw)
	}
	done := make(chan struct{})
	if in != nil && cio.stdinW != nil {
		go func() {
			_, _ = io.Copy(cio.stdinW, in)
			if cio.once {
				cio.closeStdin()
			}
			close(done)
		}()
	}
	select {
	case <-c.exited:
	case <-done:
	case <-ctx.Done():
	}
	return nil
}

// PortForward dials port on the sandbox's loopback, inside its network
// namespace, and copies both ways until either side closes.
func (r *streamRuntime) PortForward(ctx context.Context, sandboxID string, port int32, stream io.ReadWriteCloser) error {
	defer stream.Close()
	sb, err := r.s.store.sandbox(sandboxID)
	if err != nil {
		return err
	}
	conn, err := dialInNetNS(ctx, sb.NetNS, fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return fmt.Errorf("port forward to %d in sandbox %s: %w", port, sb.ID, err)
	}
	defer conn.Close()
	errc := make(chan error, 2)
	go func() { _, err := io.Copy(conn, stream); errc <- err }()
	go func() { _, err := io.Copy(stream, conn); errc <- err }()
	return <-errc
}

// dialInNetNS connects from inside the network namespace at path (the
// node's when path is empty). The socket is made in that namespace by a
// locked OS thread; it stays there when the thread returns.
func dialInNetNS(ctx context.Context, path, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second}
	if path == "" {
		return d.DialContext(ctx, "tcp4", addr)
	}
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		// The thread is not unlocked: it ends with the goroutine rather
		// than go back to the pool in another namespace.
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer unix.Close(orig)
		target, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer unix.Close(target)
		if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
			ch <- result{err: fmt.Errorf("enter %s: %w", path, err)}
			return
		}
		c, err := d.DialContext(ctx, "tcp4", addr)
		if unix.Setns(orig, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}
