package audit

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"gopkg.in/natefinch/lumberjack.v2"

	"podline.dev/pkg/k8sjson"
	"podline.dev/services/apiserver/internal/authz"
	"podline.dev/services/apiserver/internal/request"
)

// Logger writes events of the requests its policy selects.
type Logger struct {
	policy *Policy
	now    func() time.Time
	mu     sync.Mutex
	w      io.Writer
}

// NewLogger writes JSON lines to w.
func NewLogger(w io.Writer, p *Policy) *Logger {
	return &Logger{policy: p, now: time.Now, w: w}
}

// Rotation bounds a log file, as kube-apiserver's --audit-log-maxsize,
// --audit-log-maxbackup and --audit-log-maxage do. Without MaxSizeMB the
// file is never rotated.
type Rotation struct {
	// MaxSizeMB is the size, in megabytes, at which the file is renamed
	// with its rotation time (audit-<time>.log) and a new one begun.
	MaxSizeMB int
	// MaxBackups is how many renamed files are kept (0: all).
	MaxBackups int
	// MaxAgeDays removes renamed files older than this (0: none).
	MaxAgeDays int
}

// Open appends to the file at path ("-": standard output), rotated as rot
// says.
func Open(path string, p *Policy, rot Rotation) (*Logger, io.Closer, error) {
	if path == "-" {
		return NewLogger(os.Stdout, p), io.NopCloser(nil), nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, nil, err
	}
	if rot.MaxSizeMB == 0 {
		return NewLogger(f, p), f, nil
	}
	// The file is opened above to fail at start on a bad path; the rotating
	// writer reopens it on the first event.
	if err := f.Close(); err != nil {
		return nil, nil, err
	}
	w := &lumberjack.Logger{Filename: path, MaxSize: rot.MaxSizeMB, MaxBackups: rot.MaxBackups, MaxAge: rot.MaxAgeDays}
	return NewLogger(w, p), w, nil
}

// Meta is what the transport knows about a request.
type Meta struct {
	URI       string
	SourceIP  string
	UserAgent string
	// Impersonator is who authenticated when the request's user is an
	// impersonated one: the event's user, with the request's user as its
	// impersonatedUser, as Kubernetes logs them.
	Impersonator *request.User
}

// Record is one request's audit trail; a nil Record logs nothing.
type Record struct {
	l     *Logger
	ev    Event
	omit  []Stage
	start time.Time
}

// Start begins a request's record and logs RequestReceived. request is the
// decoded request; at Request level and above its object is logged. It
// returns nil when the policy says None.
func (l *Logger) Start(ctx context.Context, a authz.Attributes, m Meta, request proto.Message) *Record {
	if l == nil {
		return nil
	}
	level, omit := l.policy.LevelFor(a)
	if level == LevelNone {
		return nil
	}
	now := l.now()
	r := &Record{l: l, omit: omit, start: now, ev: Event{
		Kind: "Event", APIVersion: "audit.k8s.io/v1", Level: level, AuditID: newAuditID(),
		RequestURI: m.URI, Verb: a.Verb, UserAgent: m.UserAgent, RequestReceivedTimestamp: now,
	}}
	if m.SourceIP != "" {
		r.ev.SourceIPs = []string{m.SourceIP}
	}
	if a.User != nil {
		r.ev.User = UserInfo{Username: a.User.Name, UID: a.User.UID, Groups: a.User.Groups}
	}
	if m.Impersonator != nil {
		impersonated := r.ev.User
		r.ev.ImpersonatedUser = &impersonated
		r.ev.User = UserInfo{Username: m.Impersonator.Name, UID: m.Impersonator.UID, Groups: m.Impersonator.Groups}
	}
	if a.ResourceRequest {
		r.ev.ObjectRef = &ObjectReference{Resource: a.Resource, Namespace: a.Namespace, Name: a.Name, APIGroup: a.APIGroup, Subresource: a.Subresource}
		if r.ev.ObjectRef.Name == "" && request != nil {
			// A create names its object in the body, as Kubernetes logs it.
			r.ev.ObjectRef.Name = objectName(request)
		}
	}
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		r.ev.TraceID = sc.TraceID().String()
	}
	if level != LevelMetadata && request != nil {
		r.ev.RequestObject = objectJSON(request)
	}
	r.write(StageRequestReceived)
	return r
}

// Started logs ResponseStarted (a watch whose stream is open).
func (r *Record) Started(code int) {
	if r == nil {
		return
	}
	r.ev.ResponseStatus = &ResponseStatus{Code: code}
	r.write(StageResponseStarted)
}

// Complete logs ResponseComplete with the answer's code; st carries the
// failure's Status fields, response the object answered (logged at
// RequestResponse).
func (r *Record) Complete(st ResponseStatus, response proto.Message) {
	if r == nil {
		return
	}
	r.ev.ResponseStatus = &st
	r.ev.RequestObject = nil // logged once, with RequestReceived
	if r.ev.Level == LevelRequestResponse && response != nil {
		r.ev.ResponseObject = objectJSON(response)
	}
	r.write(StageResponseComplete)
}

func (r *Record) write(stage Stage) {
	if slices.Contains(r.omit, stage) {
		return
	}
	now := r.l.now()
	r.ev.Stage = stage
	r.ev.StageTimestamp = now
	r.ev.Latency = now.Sub(r.start).String()
	line, err := json.Marshal(&r.ev)
	if err != nil {
		slog.Error("audit: encode event", "err", err)
		return
	}
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	if _, err := r.l.w.Write(append(line, '\n')); err != nil {
		slog.Error("audit: write event", "err", err)
	}
}

// requestObject is a request's object: the "object" field of a write
// request, or the message itself.
func requestObject(m proto.Message) protoreflect.Message {
	msg := m.ProtoReflect()
	if fd := msg.Descriptor().Fields().ByName("object"); fd != nil && fd.Kind() == protoreflect.MessageKind && msg.Has(fd) {
		return msg.Get(fd).Message()
	}
	return msg
}

// objectName is the metadata.name of a request's object ("" without one).
func objectName(m proto.Message) string {
	obj := requestObject(m)
	fd := obj.Descriptor().Fields().ByName("metadata")
	if fd == nil || fd.Kind() != protoreflect.MessageKind || !obj.Has(fd) {
		return ""
	}
	meta := obj.Get(fd).Message()
	if nfd := meta.Descriptor().Fields().ByName("name"); nfd != nil && nfd.Kind() == protoreflect.StringKind {
		return meta.Get(nfd).String()
	}
	return ""
}

// objectJSON is the Kubernetes JSON of a request's object.
func objectJSON(m proto.Message) json.RawMessage {
	b, err := k8sjson.Marshal(requestObject(m).Interface())
	if err != nil {
		return nil
	}
	return b
}
