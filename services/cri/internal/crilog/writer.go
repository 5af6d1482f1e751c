package crilog

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// DefaultMaxLine is the longest line written as one record; a longer one
// is cut into partial records of this size.
const DefaultMaxLine = 16 << 10

// File is a container's log file, shared by its stdout and stderr
// Writers. Reopen closes it and opens the path again (the kubelet renamed
// the old file to rotate it).
type File struct {
	path string

	mu sync.Mutex
	w  io.WriteCloser
}

// Open opens (creating, appending) the log file at path.
func Open(path string) (*File, error) {
	f := &File{path: path}
	if err := f.Reopen(); err != nil {
		return nil, err
	}
	return f, nil
}

// NewFile wraps w (tests).
func NewFile(w io.WriteCloser) *File { return &File{w: w} }

// Reopen opens the file at its path again.
func (f *File) Reopen() error {
	if f.path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
		return err
	}
	nf, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("open container log: %w", err)
	}
	f.mu.Lock()
	old := f.w
	f.w = nf
	f.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	return nil
}

// write writes one or more whole records at once, so records of two
// streams never interleave.
func (f *File) write(p []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.w == nil {
		return os.ErrClosed
	}
	_, err := f.w.Write(p)
	return err
}

// Close closes the file.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.w == nil {
		return nil
	}
	err := f.w.Close()
	f.w = nil
	return err
}

// Writer turns one stream's bytes into records in a File. It is an
// io.WriteCloser; Close writes a pending partial line as a full record.
type Writer struct {
	file    *File
	stream  Stream
	maxLine int
	now     func() time.Time

	mu      sync.Mutex
	pending []byte
	out     []byte
}

// NewWriter returns a Writer of stream s into f.
func NewWriter(f *File, s Stream) *Writer {
	return &Writer{file: f, stream: s, maxLine: DefaultMaxLine, now: time.Now}
}

// WithClock sets the time records are stamped with (tests).
func (w *Writer) WithClock(now func() time.Time) *Writer { w.now = now; return w }

// WithMaxLine sets the longest full record (tests).
func (w *Writer) WithMaxLine(n int) *Writer { w.maxLine = n; return w }

// Write writes every complete line of p (and of what came before it) as a
// record, and keeps the rest for the next call.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	t := w.now()
	w.out = w.out[:0]
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.pending = append(w.pending, p...)
			p = nil
		} else {
			line := p[:i]
			p = p[i+1:]
			if len(w.pending) > 0 {
				w.pending = append(w.pending, line...)
				line = w.pending
			}
			w.emit(t, line, false)
			w.pending = w.pending[:0]
		}
		for len(w.pending) >= w.maxLine {
			w.emit(t, w.pending[:w.maxLine], true)
			w.pending = append(w.pending[:0], w.pending[w.maxLine:]...)
		}
	}
	if len(w.out) == 0 {
		return n, nil
	}
	if err := w.file.write(w.out); err != nil {
		return 0, err
	}
	return n, nil
}

// emit adds records of line, cut at maxLine, to the output batch.
func (w *Writer) emit(t time.Time, line []byte, partial bool) {
	for len(line) > w.maxLine {
		w.out = AppendRecord(w.out, t, w.stream, true, line[:w.maxLine])
		line = line[w.maxLine:]
	}
	w.out = AppendRecord(w.out, t, w.stream, partial, line)
}

// Close writes what is left of an unterminated last line.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) == 0 {
		return nil
	}
	w.out = AppendRecord(w.out[:0], w.now(), w.stream, false, w.pending)
	w.pending = w.pending[:0]
	return w.file.write(w.out)
}
