package main

import (
	"maps"
	"strings"
	"testing"
)

func TestProtoCommentsTakesOnlyLeadingComments(t *testing.T) {
	src := `// Package podline.x.v1 is a file comment, not a description.
syntax = "proto3";

package podline.x.v1;

// ---------------------------------------------------------------------------
// Section banner, set off by a blank line.

// Thing is a kind
// over two lines.
message Thing {
  string api_version = 1;
  // The size, in bytes.
  optional int64 size = 2;

  // A note for readers of the file.

  repeated string names = 3; // trailing, not leading
  // Labels of the thing.
  map<string, string> labels = 4 [json_name = "labels"];
  //
  // Spaced   words.
  //
  podline.meta.v1.Time when = 5;
}

message Bare {
  // Kept.
  string name = 1;
}
`
	got, err := protoComments(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"podline.x.v1.Thing":        "Thing is a kind over two lines.",
		"podline.x.v1.Thing.size":   "The size, in bytes.",
		"podline.x.v1.Thing.labels": "Labels of the thing.",
		"podline.x.v1.Thing.when":   "Spaced words.",
		"podline.x.v1.Bare.name":    "Kept.",
	}
	if !maps.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestProtoCommentsRefusesNestedMessages(t *testing.T) {
	src := "package p;\nmessage A {\n  message B {\n  }\n}\n"
	if _, err := protoComments(strings.NewReader(src)); err == nil {
		t.Error("a nested message was read as a top-level one")
	}
}
