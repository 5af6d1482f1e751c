package watchstream

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// Kind says what a Message is.
type Kind int32

const (
	// KindEvent is one watch event: ADDED, MODIFIED or DELETED.
	KindEvent Kind = 1
	// KindProgress says the resource is current to Revision with no change.
	KindProgress Kind = 2
	// KindReset says the publisher relisted at Revision: the stream may
	// lack events before it.
	KindReset Kind = 3
)

// Message is one published watch event or mark. On the wire it is the
// protobuf message
//
//	message WatchMessage {
//	  int32  kind      = 1; // Kind
//	  string type      = 2; // ADDED, MODIFIED, DELETED (events only)
//	  int64  revision  = 3; // the event's etcd mod revision, or the mark's revision
//	  uint64 sequence  = 4; // per resource and epoch, from 1, no gaps
//	  string epoch     = 5; // the publisher's run
//	  bytes  object    = 6; // the object, protobuf (events only)
//	  int64  published = 7; // unix nanoseconds at publish, for lag
//	}
type Message struct {
	Kind      Kind
	Type      string
	Revision  int64
	Sequence  uint64
	Epoch     string
	Object    []byte
	Published int64
}

// ErrMalformed is returned by Unmarshal for bytes that are not a Message.
var ErrMalformed = errors.New("watchstream: malformed message")

// Marshal encodes m.
func (m *Message) Marshal() []byte {
	b := make([]byte, 0, len(m.Object)+len(m.Type)+len(m.Epoch)+48)
	b = appendVarint(b, 1, uint64(m.Kind))
	if m.Type != "" {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, m.Type)
	}
	b = appendVarint(b, 3, uint64(m.Revision))
	b = appendVarint(b, 4, m.Sequence)
	if m.Epoch != "" {
		b = protowire.AppendTag(b, 5, protowire.BytesType)
		b = protowire.AppendString(b, m.Epoch)
	}
	if len(m.Object) > 0 {
		b = protowire.AppendTag(b, 6, protowire.BytesType)
		b = protowire.AppendBytes(b, m.Object)
	}
	return appendVarint(b, 7, uint64(m.Published))
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// Unmarshal decodes b into m. Unknown fields are skipped, as protobuf
// readers do. m.Object aliases b.
func (m *Message) Unmarshal(b []byte) error {
	*m = Message{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%w: %v", ErrMalformed, protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case typ == protowire.VarintType && num >= 1 && num <= 7:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return fmt.Errorf("%w: field %d: %v", ErrMalformed, num, protowire.ParseError(n))
			}
			b = b[n:]
			switch num {
			case 1:
				m.Kind = Kind(v)
			case 3:
				m.Revision = int64(v)
			case 4:
				m.Sequence = v
			case 7:
				m.Published = int64(v)
			}
		case typ == protowire.BytesType && (num == 2 || num == 5 || num == 6):
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return fmt.Errorf("%w: field %d: %v", ErrMalformed, num, protowire.ParseError(n))
			}
			b = b[n:]
			switch num {
			case 2:
				m.Type = string(v)
			case 5:
				m.Epoch = string(v)
			case 6:
				m.Object = v
			}
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return fmt.Errorf("%w: field %d: %v", ErrMalformed, num, protowire.ParseError(n))
			}
			b = b[n:]
		}
	}
	if m.Kind < KindEvent || m.Kind > KindReset {
		return fmt.Errorf("%w: kind %d", ErrMalformed, m.Kind)
	}
	return nil
}
