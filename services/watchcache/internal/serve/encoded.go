package serve

import (
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
)

// A change goes to every watcher it concerns as the same object, so the
// replica encodes each watch event once and sends those bytes on every
// stream, instead of marshaling the object again per watcher.

// ServerOptions are the options a gRPC server needs to serve Register's
// services: a codec that sends pre-encoded watch events as they are.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ForceServerCodecV2(codec{encoding.GetCodecV2("proto")})}
}

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
	obj object.Object // the cache's shared, read-only object
	typ watch.EventType
}

// eventMemo holds the encoding of recent events of one resource.
type eventMemo struct {
	mu sync.Mutex
	m  map[memoKey]encodedEvent
}

// encode returns ev as msg(ev) encoded, once per event.
func (e *eventMemo) encode(ev watch.Event, msg func(watch.Event) proto.Message) (encodedEvent, error) {
	key := memoKey{ev.Object, ev.Type}
	e.mu.Lock()
	defer e.mu.Unlock()
	if b, ok := e.m[key]; ok {
		return b, nil
	}
	b, err := proto.Marshal(msg(ev))
	if err != nil {
		return nil, err
	}
	if e.m == nil || len(e.m) >= memoLimit {
		e.m = make(map[memoKey]encodedEvent, 256)
	}
	e.m[key] = b
	return b, nil
}
