package crilog

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

type nopCloser struct{ *bytes.Buffer }

func (nopCloser) Close() error { return nil }

var t0 = time.Date(2026, 1, 2, 15, 4, 5, 123456789, time.UTC)

func TestWriterWritesOneRecordPerLineInCRIFormat(t *testing.T) {
	cases := []struct {
		name    string
		maxLine int
		writes  []string
		close   bool
		want    []string
	}{
		{name: "one full line", writes: []string{"hello\n"},
			want: []string{"2026-01-02T15:04:05.123456789Z stdout F hello"}},
		{name: "a line in two writes is one record", writes: []string{"hel", "lo\nwor", "ld\n"},
			want: []string{"2026-01-02T15:04:05.123456789Z stdout F hello", "2026-01-02T15:04:05.123456789Z stdout F world"}},
		{name: "an empty line is an empty record", writes: []string{"\n"},
			want: []string{"2026-01-02T15:04:05.123456789Z stdout F "}},
		{name: "a long line is cut into partial records", maxLine: 4, writes: []string{"abcdefghij\n"},
			want: []string{
				"2026-01-02T15:04:05.123456789Z stdout P abcd",
				"2026-01-02T15:04:05.123456789Z stdout P efgh",
				"2026-01-02T15:04:05.123456789Z stdout F ij"}},
		{name: "an unterminated line waits for its end", writes: []string{"abc"}, want: nil},
		{name: "close writes an unterminated line as full", writes: []string{"abc"}, close: true,
			want: []string{"2026-01-02T15:04:05.123456789Z stdout F abc"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := NewWriter(NewFile(nopCloser{&buf}), Stdout).WithClock(func() time.Time { return t0 })
			if tc.maxLine > 0 {
				w.WithMaxLine(tc.maxLine)
			}
			for _, s := range tc.writes {
				if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
					t.Fatalf("Write(%q) = %d, %v", s, n, err)
				}
			}
			if tc.close {
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
			}
			got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
			if buf.Len() == 0 {
				got = nil
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestRecordTimestampKeepsTheZoneAndTrimsZeros(t *testing.T) {
	zone := time.FixedZone("", 2*3600)
	got := string(AppendRecord(nil, time.Date(2026, 1, 2, 15, 4, 5, 500000000, zone), Stderr, false, []byte("x")))
	if want := "2026-01-02T15:04:05.5+02:00 stderr F x\n"; got != want {
		t.Fatalf("record %q, want %q", got, want)
	}
}

func TestStreamsOfOneFileDoNotInterleaveWithinARecord(t *testing.T) {
	var buf bytes.Buffer
	f := NewFile(nopCloser{&buf})
	out := NewWriter(f, Stdout).WithClock(func() time.Time { return t0 })
	errw := NewWriter(f, Stderr).WithClock(func() time.Time { return t0 })
	_, _ = out.Write([]byte("o1 "))
	_, _ = errw.Write([]byte("e1\n"))
	_, _ = out.Write([]byte("o2\n"))
	want := "2026-01-02T15:04:05.123456789Z stderr F e1\n2026-01-02T15:04:05.123456789Z stdout F o1 o2\n"
	if buf.String() != want {
		t.Fatalf("log %q, want %q", buf.String(), want)
	}
}
