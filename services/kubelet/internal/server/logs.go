package server

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"podline.dev/services/kubelet/internal/runtime"
)

// followPoll is how often a followed log is checked for more.
const followPoll = 100 * time.Millisecond

func (s *Server) logs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	previous := q.Get("previous") == "true"
	c, err := s.container(r.Context(), r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container"), previous)
	if err != nil {
		httpError(w, err)
		return
	}
	f, err := os.Open(c.LogPath)
	if err != nil {
		httpError(w, err)
		return
	}
	defer f.Close()
	if n, err := strconv.Atoi(q.Get("tailLines")); err == nil && n >= 0 {
		if err := seekTail(f, n); err != nil {
			httpError(w, err)
			return
		}
	}
	limit := int64(-1)
	if n, err := strconv.ParseInt(q.Get("limitBytes"), 10, 64); err == nil && n > 0 {
		limit = n
	}
	opts := logOptions{timestamps: q.Get("timestamps") == "true"}
	if n, err := strconv.ParseInt(q.Get("sinceSeconds"), 10, 64); err == nil && n > 0 {
		opts.since = time.Now().Add(-time.Duration(n) * time.Second)
	}
	if t, err := time.Parse(time.RFC3339, q.Get("sinceTime")); err == nil {
		opts.since = t
	}
	lw := &limitWriter{w: w, left: limit}
	cp := &logCopier{opts: opts, w: lw}
	br := bufio.NewReaderSize(f, 64<<10)
	w.Header().Set("Content-Type", "text/plain")
	if err := cp.copyFrom(br); err != nil || lw.full() {
		return
	}
	if q.Get("follow") != "true" || previous {
		return
	}
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	s.follow(r.Context(), br, cp, lw, flusher, c.ID, c.Pod.UID)
}

// follow copies the records appended to the log until the container
// stops or the client goes.
func (s *Server) follow(ctx context.Context, br *bufio.Reader, cp *logCopier, w *limitWriter, flusher http.Flusher, id, uid string) {
	t := time.NewTicker(followPoll)
	defer t.Stop()
	checks := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		before := w.written
		if cp.copyFrom(br) != nil || w.full() {
			return
		}
		if w.written > before && flusher != nil {
			flusher.Flush()
		}
		checks++
		if checks%10 == 0 && !s.running(ctx, id, uid) {
			_ = cp.copyFrom(br)
			return
		}
	}
}

func (s *Server) running(ctx context.Context, id, uid string) bool {
	cs, err := s.runtime.ListContainers(ctx, uid)
	if err != nil {
		return true
	}
	for _, c := range cs {
		if c.ID == id {
			return c.State == runtime.ContainerRunning
		}
	}
	return false
}

// seekTail positions f before its last n lines (records: a line split
// into partial records counts once per record).
func seekTail(f *os.File, n int) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	if n == 0 {
		_, err := f.Seek(0, io.SeekEnd)
		return err
	}
	const chunk = 32 << 10
	pos, lines := size, 0
	buf := make([]byte, chunk)
	for pos > 0 {
		read := int64(chunk)
		if pos < read {
			read = pos
		}
		pos -= read
		if _, err := f.ReadAt(buf[:read], pos); err != nil && err != io.EOF {
			return err
		}
		b := buf[:read]
		for i := len(b) - 1; i >= 0; i-- {
			if b[i] != '\n' {
				continue
			}
			if pos+int64(i) == size-1 {
				continue // the file's final newline ends the last line
			}
			lines++
			if lines == n {
				_, err := f.Seek(pos+int64(i)+1, io.SeekStart)
				return err
			}
		}
	}
	_, err = f.Seek(0, io.SeekStart)
	return err
}

type limitWriter struct {
	w       io.Writer
	left    int64 // -1: no limit
	written int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.left < 0 {
		n, err := l.w.Write(p)
		l.written += int64(n)
		return n, err
	}
	if l.left == 0 {
		return 0, io.ErrShortWrite
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.w.Write(p)
	l.left -= int64(n)
	l.written += int64(n)
	return n, err
}

func (l *limitWriter) full() bool { return l.left == 0 }
