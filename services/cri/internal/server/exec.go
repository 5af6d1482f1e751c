package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remotecommand "k8s.io/cri-streaming/pkg/streaming/remotecommand"
)

// maxExecOutput bounds what ExecSync keeps of each stream (probes read it).
const maxExecOutput = 16 << 20

// execOptions are the streams and terminal of one exec.
type execOptions struct {
	cmd            []string
	stdin          io.Reader
	stdout, stderr io.Writer
	tty            bool
	resize         <-chan remotecommand.TerminalSize
	timeout        time.Duration
}

// ExecSync runs a command in a running container and returns its output
// and exit code.
func (s *Service) ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	c, err := s.store.container(req.GetContainerId())
	if err != nil {
		return nil, toGRPC(err)
	}
	if len(req.GetCmd()) == 0 {
		return nil, toGRPC(fmt.Errorf("exec needs a command: %w", ErrInvalid))
	}
	var stdout, stderr limitedBuffer
	stdout.max, stderr.max = maxExecOutput, maxExecOutput
	code, err := s.exec(s.ctx(ctx), c.ID, execOptions{
		cmd: req.GetCmd(), stdout: &stdout, stderr: &stderr, timeout: time.Duration(req.GetTimeout()) * time.Second,
	})
	if err != nil {
		if ctx.Err() == nil && isTimeout(err) {
			return nil, status.Errorf(codes.DeadlineExceeded, "%v", err)
		}
		return nil, toGRPC(err)
	}
	return &runtimeapi.ExecSyncResponse{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: int32(code)}, nil
}

type timeoutError struct{ error }

func isTimeout(err error) bool { _, ok := err.(timeoutError); return ok }

// exec runs a process in the container's task with the caller's streams.
func (s *Service) exec(ctx context.Context, id string, o execOptions) (int, error) {
	c, err := s.client.LoadContainer(ctx, id)
	if err != nil {
		return 0, err
	}
	task, err := c.Task(ctx, nil)
	if err != nil {
		if isNotFound(err) {
			return 0, fmt.Errorf("container %s: %w", id, ErrNotRunning)
		}
		return 0, err
	}
	spec, err := c.Spec(ctx)
	if err != nil {
		return 0, err
	}
	pspec := *spec.Process
	pspec.Args = o.cmd
	pspec.Terminal = o.tty

	stdin := o.stdin
	var closer *stdinCloser
	if stdin != nil {
		closer = &stdinCloser{r: stdin, done: make(chan struct{})}
		stdin = closer
	}
	stdout, stderr := o.stdout, o.stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil && !o.tty {
		stderr = io.Discard
	}
	// Both streams are copied at once: one writer given for both is
	// serialized.
	mu := &sync.Mutex{}
	if stderr != nil && stdout != stderr {
		stderr = &lockedWriter{w: stderr, mu: &sync.Mutex{}}
	} else if stderr != nil {
		stderr = &lockedWriter{w: stderr, mu: mu}
	}
	stdout = &lockedWriter{w: stdout, mu: mu}
	if o.tty {
		stderr = nil
	}
	ioOpts := []cio.Opt{cio.WithStreams(stdin, stdout, stderr), cio.WithFIFODir(s.fifoDir())}
	if o.tty {
		ioOpts = append(ioOpts, cio.WithTerminal)
	}
	execID := "exec-" + newID()[:16]
	proc, err := task.Exec(ctx, execID, &pspec, cio.NewCreator(ioOpts...))
	if err != nil {
		return 0, fmt.Errorf("exec in %s: %w", id, err)
	}
	cleanup := context.WithoutCancel(ctx)
	defer func() { _, _ = proc.Delete(cleanup, containerd.WithProcessKill) }()
	exitCh, err := proc.Wait(ctx)
	if err != nil {
		return 0, err
	}
	if err := proc.Start(ctx); err != nil {
		return 0, fmt.Errorf("start exec in %s: %w", id, err)
	}
	if closer != nil {
		go func() {
			<-closer.done
			_ = proc.CloseIO(cleanup, containerd.WithStdinCloser)
		}()
	}
	if o.resize != nil {
		go func() {
			for sz := range o.resize {
				_ = proc.Resize(cleanup, uint32(sz.Width), uint32(sz.Height))
			}
		}()
	}
	var timeoutC <-chan time.Time
	if o.timeout > 0 {
		t := time.NewTimer(o.timeout)
		defer t.Stop()
		timeoutC = t.C
	}
	select {
	case st := <-exitCh:
		proc.IO().Wait()
		code, _, err := st.Result()
		return int(code), err
	case <-timeoutC:
		_ = proc.Kill(cleanup, 9)
		return 0, timeoutError{fmt.Errorf("command %q timed out after %s", o.cmd, o.timeout)}
	case <-ctx.Done():
		_ = proc.Kill(cleanup, 9)
		return 0, ctx.Err()
	}
}

// stdinCloser signals when the caller's stdin reaches its end, so the
// process's stdin can be closed.
type stdinCloser struct {
	r    io.Reader
	once sync.Once
	done chan struct{}
}

func (s *stdinCloser) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil {
		s.once.Do(func() { close(s.done) })
	}
	return n, err
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// limitedBuffer keeps the first max bytes written.
type limitedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		if len(p) > room {
			b.buf.Write(p[:room])
		} else {
			b.buf.Write(p)
		}
	}
	return len(p), nil
}

func (b *limitedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}
