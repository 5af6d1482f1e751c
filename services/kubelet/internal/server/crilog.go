package server

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"time"
)

// The CRI log format: one record a line,
//
//	2016-10-06T00:17:09.669794202Z stdout F the log line
//
// a timestamp (RFC 3339 with nanoseconds), the stream, a tag (F: the last
// piece of a line; P: a partial piece, the line goes on in the next
// record) and the content.
const (
	tagFull    = 'F'
	tagPartial = 'P'
)

// errBadLogLine is a line that is not a CRI log record.
var errBadLogLine = errors.New("not a CRI log record")

// logRecord is one parsed line.
type logRecord struct {
	ts      time.Time
	stream  string
	partial bool
	content []byte
}

// parseCRILine parses one line of a CRI log file, without its newline.
func parseCRILine(line []byte) (logRecord, error) {
	var r logRecord
	ts, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok {
		return r, errBadLogLine
	}
	t, err := time.Parse(time.RFC3339Nano, string(ts))
	if err != nil {
		return r, errBadLogLine
	}
	stream, rest, ok := bytes.Cut(rest, []byte{' '})
	if !ok || (string(stream) != "stdout" && string(stream) != "stderr") {
		return r, errBadLogLine
	}
	tag, content, _ := bytes.Cut(rest, []byte{' '})
	if len(tag) == 0 {
		return r, errBadLogLine
	}
	// Tags may carry more fields after ':'; the first says full or partial.
	r.ts, r.stream, r.partial, r.content = t, string(stream), tag[0] == tagPartial, content
	return r, nil
}

// logOptions are what a logs request asks for.
type logOptions struct {
	timestamps bool
	// since drops records before it (zero: none dropped).
	since time.Time
}

// logCopier turns CRI log records into the lines `kubectl logs` shows:
// the content, a newline after the last piece of each line, and with
// timestamps each record's time first.
type logCopier struct {
	opts    logOptions
	w       io.Writer
	pending []byte // an incomplete line at the file's end, read again later
}

// copyFrom copies every complete record r holds now; an incomplete last
// line is kept for the next call (a follow sees the rest once written).
func (c *logCopier) copyFrom(r *bufio.Reader) error {
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			c.pending = append(c.pending, line...)
			continue
		}
		if err != nil {
			c.pending = append(c.pending, line...)
			if err == io.EOF {
				return nil
			}
			return err
		}
		if len(c.pending) > 0 {
			line = append(c.pending, line...)
			c.pending = nil
		}
		if err := c.write(bytes.TrimSuffix(line, []byte{'\n'})); err != nil {
			return err
		}
	}
}

func (c *logCopier) write(line []byte) error {
	rec, err := parseCRILine(line)
	if err != nil {
		return nil // skip what is not a record, as the kubelet does
	}
	if !c.opts.since.IsZero() && rec.ts.Before(c.opts.since) {
		return nil
	}
	var out []byte
	if c.opts.timestamps {
		out = append(rec.ts.UTC().AppendFormat(out, time.RFC3339Nano), ' ')
	}
	out = append(out, rec.content...)
	if !rec.partial {
		out = append(out, '\n')
	}
	_, err = c.w.Write(out)
	return err
}
