package grpcdyn

import (
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
)

// A change goes to every watcher it concerns as the same object, so a
// server encodes each watch event once and sends those bytes on every
// stream, instead of marshaling the object again per watcher: with a
// thousand watchers that is most of the work of a watch.

// ServerCodec is the gRPC server option under which an event encoded by
// an EventMemo goes out as its bytes; every other message is proto as usual.
func ServerCodec() grpc.ServerOption {
	return grpc.ForceServerCodecV2(codec{protoCodec()})
}

func protoCodec() encoding.CodecV2 { return encoding.GetCodecV2("proto") }

// encodedEvent is a <Kind>WatchEvent in wire form, shared by its streams.
type encodedEvent []byte

// codec is proto, except that an encodedEvent goes out as its bytes.
type codec struct{ proto encoding.CodecV2 }

func (c codec) Marshal(v any) (mem.BufferSlice, error) {
	if e, ok := v.(encodedEvent); ok {
		return mem.BufferSlice{mem.SliceBuffer(e)}, nil // read-only, never freed: shared
	}
	return c.proto.Marshal(v)
}

func (c codec) Unmarshal(data mem.BufferSlice, v any) error { return c.proto.Unmarshal(data, v) }

func (c codec) Name() string { return c.proto.Name() }

// memoLimit bounds the memo: the events of the last moments, whose
// watchers are still being sent them. Past it the memo starts afresh,
// which costs only encoding some events again.
const memoLimit = 4096

type memoKey struct {
	obj object.Object // the watch cache's shared, read-only object
	typ watch.EventType
}

// EventMemo holds the encoding of one resource's recent watch events.
// Its zero value is ready to use.
type EventMemo struct {
	mu sync.Mutex
	m  map[memoKey]encodedEvent
}

// Message returns what to send for ev on a stream of a server with
// ServerCodec: a change's event encoded once for all its streams, or a
// bookmark's own message (its object is made for the moment, never shared).
func (e *EventMemo) Message(ev watch.Event, msgs Messages) (any, error) {
	if ev.Type == watch.Bookmark || ev.Object == nil {
		return msgs.Event(ev), nil
	}
	key := memoKey{ev.Object, ev.Type}
	e.mu.Lock()
	defer e.mu.Unlock()
	if b, ok := e.m[key]; ok {
		return b, nil
	}
	wire, err := proto.Marshal(msgs.Event(ev))
	if err != nil {
		return nil, err
	}
	b := encodedEvent(wire)
	if e.m == nil || len(e.m) >= memoLimit {
		e.m = make(map[memoKey]encodedEvent, 256)
	}
	e.m[key] = b
	return b, nil
}
