package containerd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"

	"podline.dev/services/kubelet/internal/runtime"
)

// maxExecOutput bounds what ExecSync keeps of each stream (probes read it).
const maxExecOutput = 16 << 10

// ExecSync runs cmd and collects its output.
func (r *Runtime) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (*runtime.ExecResult, error) {
	if timeout <= 0 {
		timeout = time.Minute
	}
	var stdout, stderr limitedBuffer
	stdout.max, stderr.max = maxExecOutput, maxExecOutput
	code, err := r.exec(ctx, id, runtime.ExecOptions{Cmd: cmd, Stdout: &stdout, Stderr: &stderr}, timeout)
	if err != nil {
		return nil, err
	}
	return &runtime.ExecResult{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: code}, nil
}

// Exec runs a command with the caller's streams.
func (r *Runtime) Exec(ctx context.Context, id string, opts runtime.ExecOptions) (int, error) {
	return r.exec(ctx, id, opts, 0)
}

func (r *Runtime) exec(ctx context.Context, id string, opts runtime.ExecOptions, timeout time.Duration) (int, error) {
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		return 0, notFound(err, "container "+id)
	}
	task, err := c.Task(ctx, nil)
	if err != nil {
		if isNotFound(err) {
			return 0, fmt.Errorf("container %s: %w", id, runtime.ErrNotRunning)
		}
		return 0, err
	}
	spec, err := c.Spec(ctx)
	if err != nil {
		return 0, err
	}
	pspec := *spec.Process
	pspec.Args = opts.Cmd
	pspec.Terminal = opts.TTY

	stdin := opts.Stdin
	var closer *stdinCloser
	if stdin != nil {
		closer = &stdinCloser{r: stdin, done: make(chan struct{})}
		stdin = closer
	}
	stdout, stderr := opts.Stdout, opts.Stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil && !opts.TTY {
		stderr = io.Discard
	}
	// Both streams are copied at once: a writer given for both is
	// serialized, and every writer is seen only as an io.Writer (a
	// bytes.Buffer's ReadFrom run from two goroutines loses output).
	mu := &sync.Mutex{}
	if stderr != nil && stdout != stderr {
		stderr = &lockedWriter{w: stderr, mu: &sync.Mutex{}}
	} else if stderr != nil {
		stderr = &lockedWriter{w: stderr, mu: mu}
	}
	stdout = &lockedWriter{w: stdout, mu: mu}
	ioOpts := []cio.Opt{cio.WithStreams(stdin, stdout, stderr), cio.WithFIFODir(r.fifoDir)}
	if opts.TTY {
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
	if opts.Resize != nil {
		go func() {
			for sz := range opts.Resize {
				_ = proc.Resize(cleanup, uint32(sz.Width), uint32(sz.Height))
			}
		}()
	}
	var timeoutC <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
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
		return 0, fmt.Errorf("command %q timed out after %s: %w", opts.Cmd, timeout, context.DeadlineExceeded)
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
