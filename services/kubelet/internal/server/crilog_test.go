package server

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestParseCRILine(t *testing.T) {
	for _, tc := range []struct {
		line    string
		want    logRecord
		wantErr bool
	}{
		{line: "2026-12-01T10:00:00.5Z stdout F hello world", want: logRecord{stream: "stdout", content: []byte("hello world")}},
		{line: "2026-12-01T10:00:00.5Z stderr P part", want: logRecord{stream: "stderr", partial: true, content: []byte("part")}},
		{line: "2026-12-01T10:00:00.5Z stdout F", want: logRecord{stream: "stdout"}},
		{line: "2026-12-01T10:00:00.5Z stdout F:extra x", want: logRecord{stream: "stdout", content: []byte("x")}},
		{line: "plain text", wantErr: true},
		{line: "2026-12-01T10:00:00.5Z stdin F x", wantErr: true},
	} {
		got, err := parseCRILine([]byte(tc.line))
		if tc.wantErr {
			if err == nil {
				t.Errorf("%q: no error", tc.line)
			}
			continue
		}
		if err != nil || got.stream != tc.want.stream || got.partial != tc.want.partial || !bytes.Equal(got.content, tc.want.content) ||
			!got.ts.Equal(time.Date(2026, 12, 1, 10, 0, 0, 5e8, time.UTC)) {
			t.Errorf("%q: %+v %v, want %+v", tc.line, got, err, tc.want)
		}
	}
}

// A record half written when the log is read is shown once it is complete.
func TestLogCopierWaitsForTheRestOfAnIncompleteRecord(t *testing.T) {
	p := filepath.Join(t.TempDir(), "0.log")
	rec := criLog("stdout F line 4")
	if err := os.WriteFile(p, []byte(rec[:20]), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	cp := &logCopier{w: &out}
	br := bufio.NewReader(f)
	if err := cp.copyFrom(br); err != nil || out.Len() != 0 {
		t.Fatalf("half a record: %q %v", out.String(), err)
	}
	w, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	_, _ = w.WriteString(rec[20:])
	w.Close()
	if err := cp.copyFrom(br); err != nil || out.String() != "line 4\n" {
		t.Fatalf("completed record: %q %v", out.String(), err)
	}
}
