package watchstream

import (
	"strings"
	"time"

	"podline.dev/proto/apis"
)

// Stream defaults: a bounded window of recent events on disk. Five minutes
// match the apiserver's default etcd compaction interval, so a replica that
// replays the window can still list the revision the window starts at.
const (
	StreamName    = "PODLINE_WATCH"
	SubjectPrefix = "podline.watch"
	DefaultMaxAge = 5 * time.Minute
	// DefaultMaxMsgs bounds the window by count: 200 writes/s for five
	// minutes is 60,000 events, plus progress marks.
	DefaultMaxMsgs = 200_000
	// TraceparentHeader carries the object's W3C traceparent.
	TraceparentHeader = "traceparent"
)

// Subject is where one event of res in namespace is published:
// podline.watch.<group>.<resource>.<namespace>, with "core" for the core
// group, dots in group names as underscores, and "_cluster" for
// cluster-scoped objects (and for marks, which belong to no namespace).
func Subject(res apis.Resource, namespace string) string {
	if namespace == "" {
		namespace = "_cluster"
	}
	return resourcePrefix(res) + "." + namespace
}

// ResourceFilter is the subject filter of every message of res.
func ResourceFilter(res apis.Resource) string { return resourcePrefix(res) + ".>" }

// StreamSubjects is the subject filter of the whole stream.
func StreamSubjects() string { return SubjectPrefix + ".>" }

func resourcePrefix(res apis.Resource) string {
	group := res.Group.Name
	if group == "" {
		group = "core"
	}
	return SubjectPrefix + "." + strings.ReplaceAll(group, ".", "_") + "." + res.Name
}
