package server

import (
	"io"
	"sync"

	"github.com/containerd/containerd/v2/pkg/cio"

	"podline.dev/services/cri/internal/crilog"
)

// containerIO is where a container's streams go: its CRI log file, and
// the clients attached to it at the moment. Stdin, when the container
// keeps one open, is fed by attached clients.
type containerIO struct {
	file     *crilog.File
	stdout   *broadcast
	stderr   *broadcast
	tty      bool
	fifoDir  string
	stdinR   *io.PipeReader
	stdinW   *io.PipeWriter
	once     bool // StdinOnce: stdin closes when the first attach ends
	closeIn  sync.Once
	closeAll sync.Once
}

// broadcast writes one stream to the log and to attached writers.
type broadcast struct {
	log io.WriteCloser
	mu  sync.Mutex
	to  map[io.Writer]struct{}
}

func (b *broadcast) Write(p []byte) (int, error) {
	n, err := b.log.Write(p)
	b.mu.Lock()
	for w := range b.to {
		if _, werr := w.Write(p); werr != nil {
			delete(b.to, w)
		}
	}
	b.mu.Unlock()
	return n, err
}

func (b *broadcast) add(w io.Writer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.to[w] = struct{}{}
}

func (b *broadcast) remove(w io.Writer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.to, w)
}

// newContainerIO opens c's log file; with a TTY both streams are one.
func (s *Service) newContainerIO(c *container) (*containerIO, error) {
	cio := &containerIO{tty: c.Config.GetTty(), fifoDir: s.fifoDir(), once: c.Config.GetStdinOnce()}
	var err error
	if c.LogPath != "" {
		if cio.file, err = crilog.Open(c.LogPath); err != nil {
			return nil, err
		}
	} else {
		cio.file = crilog.NewFile(nopWriteCloser{io.Discard})
	}
	cio.stdout = &broadcast{log: crilog.NewWriter(cio.file, crilog.Stdout), to: map[io.Writer]struct{}{}}
	cio.stderr = &broadcast{log: crilog.NewWriter(cio.file, crilog.Stderr), to: map[io.Writer]struct{}{}}
	if c.Config.GetStdin() {
		cio.stdinR, cio.stdinW = io.Pipe()
	}
	return cio, nil
}

// attachIO is newContainerIO for a container whose task runs already.
func (s *Service) attachIO(c *container) (*containerIO, error) { return s.newContainerIO(c) }

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func (c *containerIO) streams() cio.Opt {
	var stdin io.Reader
	if c.stdinR != nil {
		stdin = c.stdinR
	}
	if c.tty {
		return cio.WithStreams(stdin, c.stdout, nil)
	}
	return cio.WithStreams(stdin, c.stdout, c.stderr)
}

func (c *containerIO) opts() []cio.Opt {
	o := []cio.Opt{c.streams(), cio.WithFIFODir(c.fifoDir)}
	if c.tty {
		o = append(o, cio.WithTerminal)
	}
	return o
}

// creator makes the FIFOs of a new task.
func (c *containerIO) creator() cio.Creator { return cio.NewCreator(c.opts()...) }

// attach reopens the FIFOs of a running task.
func (c *containerIO) attach() cio.Attach { return cio.NewAttach(c.opts()...) }

// Reopen reopens the log file (after the kubelet rotated it).
func (c *containerIO) Reopen() error { return c.file.Reopen() }

// closeStdin closes the container's stdin.
func (c *containerIO) closeStdin() {
	if c.stdinW != nil {
		c.closeIn.Do(func() { _ = c.stdinW.Close() })
	}
}

// Close flushes partial lines and closes the log file.
func (c *containerIO) Close() {
	c.closeAll.Do(func() {
		c.closeStdin()
		_ = c.stdout.log.Close()
		_ = c.stderr.log.Close()
		_ = c.file.Close()
	})
}
