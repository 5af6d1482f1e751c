package natspub

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/object"
	"podline.dev/pkg/telemetry"
	"podline.dev/pkg/watchcache"
	"podline.dev/pkg/watchstream"
	"podline.dev/proto/apis"
	"podline.dev/services/apiserver/internal/registry"
)

// sink numbers one resource's messages. Its methods are called from the
// resource's cacher goroutine alone.
type sink struct {
	p     *Publisher
	res   apis.Resource
	marks string // the subject of marks

	seq          uint64
	lastRev      int64 // the revision of the last message
	lastProgress time.Time
	// lost is set by the publishing goroutine when a message of this
	// resource was dropped or not acknowledged: the next progress mark
	// then goes out even if the revision has not moved, so that replicas
	// of a quiet resource see the gap in its numbers and fill it.
	lost atomic.Bool
}

var _ registry.EventSink = (*sink)(nil)

func (s *sink) Replaced(revision int64) {
	s.publish(s.marks, &watchstream.Message{Kind: watchstream.KindReset, Revision: revision}, "")
}

func (s *sink) Progressed(revision int64) {
	now := time.Now()
	if now.Sub(s.lastProgress) < s.p.cfg.progressAt || (revision <= s.lastRev && !s.lost.Load()) {
		return
	}
	s.lost.Store(false) // a mark that is lost too sets it again
	s.lastProgress = now
	s.publish(s.marks, &watchstream.Message{Kind: watchstream.KindProgress, Revision: max(revision, s.lastRev)}, "")
}

func (s *sink) Applied(ev watchcache.Event) {
	ctx, span := telemetry.StartFromObject(context.Background(), ev.Object, "natspub", "natspub.Publish",
		trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attribute.String("resource", s.res.GroupResource()), attribute.String("key", object.Key(ev.Object)),
			attribute.Int64("revision", ev.Revision)))
	defer span.End()
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(ev.Object)
	if err != nil {
		// Every object came out of etcd through the same codec; one that
		// does not marshal is lost like a dropped message, and replicas
		// backfill it from the apiserver.
		s.seq++
		s.p.dropped.Add(1)
		s.lost.Store(true)
		span.RecordError(err)
		return
	}
	m := &watchstream.Message{Kind: watchstream.KindEvent, Type: string(ev.Type), Revision: ev.Revision, Object: data}
	s.publish(watchstream.Subject(s.res, ev.Object.GetMetadata().GetNamespace()), m, telemetry.Traceparent(ctx))
}

func (s *sink) publish(subject string, m *watchstream.Message, traceparent string) {
	s.seq++
	s.lastRev = max(s.lastRev, m.Revision)
	m.Sequence, m.Epoch, m.Published = s.seq, s.p.epoch, time.Now().UnixNano()
	msg := nats.NewMsg(subject)
	msg.Data = m.Marshal()
	msg.Header.Set(nats.MsgIdHdr, msgID(s.p.epoch, s.res, s.seq))
	if traceparent != "" {
		msg.Header.Set(watchstream.TraceparentHeader, traceparent)
	}
	s.p.enqueue(queued{msg, &s.lost})
}
