package crilog

import (
	"time"
)

// Stream names a container output stream as the CRI log format spells it.
type Stream string

const (
	Stdout Stream = "stdout"
	Stderr Stream = "stderr"
)

// Tags of a record: a full line, or part of one.
const (
	TagFull    = "F"
	TagPartial = "P"
)

// TimeFormat is the timestamp layout of a record (RFC 3339 with
// nanoseconds, trailing zeros trimmed).
const TimeFormat = time.RFC3339Nano

// AppendRecord appends one record of line (without its newline) to dst.
func AppendRecord(dst []byte, t time.Time, s Stream, partial bool, line []byte) []byte {
	dst = t.AppendFormat(dst, TimeFormat)
	dst = append(dst, ' ')
	dst = append(dst, s...)
	dst = append(dst, ' ')
	if partial {
		dst = append(dst, TagPartial...)
	} else {
		dst = append(dst, TagFull...)
	}
	dst = append(dst, ' ')
	dst = append(dst, line...)
	return append(dst, '\n')
}
