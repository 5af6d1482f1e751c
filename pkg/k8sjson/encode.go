package k8sjson

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Marshal returns the Kubernetes JSON of m, compact. A nil message is null.
func Marshal(m proto.Message) ([]byte, error) {
	e := getEncoder()
	defer putEncoder(e)
	if err := e.marshal(m); err != nil {
		return nil, err
	}
	return bytes.Clone(e.buf), nil
}

// MarshalAppend appends the Kubernetes JSON of m to b, for callers that
// reuse a buffer.
func MarshalAppend(b []byte, m proto.Message) ([]byte, error) {
	e := getEncoder()
	own, n := e.buf, len(b)
	e.buf = b
	err := e.marshal(m)
	b, e.buf = e.buf, own
	putEncoder(e)
	if err != nil {
		return b[:n], err
	}
	return b, nil
}

// MarshalIndent is Marshal with each element on a new line beginning with
// prefix and indented by indent, as encoding/json.MarshalIndent.
func MarshalIndent(m proto.Message, prefix, indent string) ([]byte, error) {
	e := getEncoder()
	defer putEncoder(e)
	if err := e.marshal(m); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.Grow(2 * len(e.buf))
	if err := json.Indent(&out, e.buf, prefix, indent); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Encoder writes messages to a stream, one JSON document per line, as a
// watch response or a log does.
type Encoder struct {
	w              io.Writer
	buf            []byte
	ind            bytes.Buffer
	prefix, indent string
}

// NewEncoder returns an Encoder writing to w.
func NewEncoder(w io.Writer) *Encoder { return &Encoder{w: w} }

// SetIndent makes later documents indented, as MarshalIndent.
func (enc *Encoder) SetIndent(prefix, indent string) {
	enc.prefix, enc.indent = prefix, indent
}

// Encode writes the JSON of m and a newline in one Write.
func (enc *Encoder) Encode(m proto.Message) error {
	b, err := MarshalAppend(enc.buf[:0], m)
	if err != nil {
		return err
	}
	if cap(b) <= 1<<20 {
		enc.buf = b // keep a buffer of ordinary size for the next document
	}
	if enc.prefix == "" && enc.indent == "" {
		_, err = enc.w.Write(append(b, '\n'))
		return err
	}
	enc.ind.Reset()
	if err := json.Indent(&enc.ind, b, enc.prefix, enc.indent); err != nil {
		return err
	}
	enc.ind.WriteByte('\n')
	_, err = enc.w.Write(enc.ind.Bytes())
	return err
}

// encoder is the state of one Marshal; pooled.
type encoder struct {
	buf []byte
	// Scratch stacks, each level using the part past its parent's.
	fields   []setField  // populated fields of the messages being written
	entries  []mapEntry  // entries of the maps being written
	wire     []byte      // the binary form being walked
	wentries []wireEntry // entries of the maps being walked
	noWire   bool        // tests: use only the protoreflect walk
	collect  func(protoreflect.FieldDescriptor, protoreflect.Value) bool
	addKey   func(protoreflect.MapKey, protoreflect.Value) bool
	keyKind  protoreflect.Kind // of the map addKey is filling
}

type setField struct {
	index int
	val   protoreflect.Value
}

type mapEntry struct {
	key string
	val protoreflect.Value
}

var encoders = sync.Pool{New: func() any {
	e := &encoder{buf: make([]byte, 0, 1024)}
	e.collect = e.collectField
	e.addKey = e.addEntry
	return e
}}

func getEncoder() *encoder { return encoders.Get().(*encoder) }

func putEncoder(e *encoder) {
	if cap(e.buf) > 1<<20 || cap(e.wire) > 1<<20 || cap(e.entries) > 1<<12 || cap(e.fields) > 1<<12 || cap(e.wentries) > 1<<12 {
		return // let an outsized buffer go
	}
	e.buf = e.buf[:0]
	e.wire = e.wire[:0]
	e.entries = e.entries[:0]
	e.fields = e.fields[:0]
	e.wentries = e.wentries[:0]
	e.noWire = false
	encoders.Put(e)
}

func (e *encoder) marshal(m proto.Message) error {
	if m == nil {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	rm := m.ProtoReflect()
	if !rm.IsValid() {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	mi := infoOf(rm.Descriptor())
	if !e.noWire {
		start := len(e.buf)
		wire, err := wireOptions.MarshalAppend(e.wire[:0], m)
		if err == nil {
			e.wire = wire
			err = e.wireMessage(wire, mi)
			if err != errWire {
				if err != nil {
					return marshalFailed(err)
				}
				return nil
			}
		}
		// protobuf refused the message (a string that is not UTF-8), or
		// wrote a form the wire walk does not take: walk it by reflection.
		e.buf = e.buf[:start]
		wireFallbacks.Add(1)
	}
	if err := e.message(rm, mi); err != nil {
		return marshalFailed(err)
	}
	return nil
}

var wireOptions = proto.MarshalOptions{AllowPartial: true}

// wireFallbacks counts Marshal calls that fell back to the protoreflect walk.
var wireFallbacks atomic.Int64

func (e *encoder) message(m protoreflect.Message, mi *messageInfo) error {
	if mi.wk != wkNone {
		return e.wellKnown(m, mi)
	}
	// One Range pass finds the populated fields (cheaper than Has and Get
	// per field); they are put back in field order, as Range's is undefined.
	start := len(e.fields)
	m.Range(e.collect)
	set := e.fields[start:]
	for i := range set {
		set[i].index = mi.position[set[i].index]
	}
	for i := 1; i < len(set); i++ {
		for j := i; j > 0 && set[j].index < set[j-1].index; j-- {
			set[j], set[j-1] = set[j-1], set[j]
		}
	}
	e.buf = append(e.buf, '{')
	first := true
	next := 0 // the next field of mi to consider for alwaysEmit
	var err error
	for i := range set {
		f := &mi.fields[set[i].index]
		if mi.hasAlwaysEmit {
			first = e.alwaysEmit(mi, next, f.index, first)
			next = f.index + 1
		}
		if !first {
			e.buf = append(e.buf, ',')
		}
		first = false
		e.buf = append(e.buf, f.key...)
		switch v := set[i].val; {
		case f.list:
			err = e.list(v.List(), f)
		case f.isMap:
			err = e.mapValue(v.Map(), f)
		default:
			err = e.value(v, &f.value)
		}
		if err != nil {
			err = atPath(err, f.name, "")
			break
		}
	}
	if err == nil && mi.hasAlwaysEmit {
		e.alwaysEmit(mi, next, len(mi.fields), first)
	}
	e.buf = append(e.buf, '}')
	clear(e.fields[start:])
	e.fields = e.fields[:start]
	return err
}

// collectField is the Range callback of message, held as a method value
// made once per encoder so that Range does not allocate a closure each time.
func (e *encoder) collectField(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
	if !fd.IsExtension() {
		e.fields = append(e.fields, setField{fd.Index(), v})
	}
	return true
}

// alwaysEmit writes the unset always-written fields of mi in [from, to).
func (e *encoder) alwaysEmit(mi *messageInfo, from, to int, first bool) bool {
	for i := from; i < to; i++ {
		if f := &mi.fields[i]; f.alwaysEmit {
			if !first {
				e.buf = append(e.buf, ',')
			}
			first = false
			e.buf = append(e.buf, f.key...)
			e.buf = append(e.buf, '[', ']')
		}
	}
	return first
}

func (e *encoder) list(l protoreflect.List, f *fieldInfo) error {
	e.buf = append(e.buf, '[')
	for i := range l.Len() {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if err := e.value(l.Get(i), &f.value); err != nil {
			return atPath(err, "", "["+strconv.Itoa(i)+"]")
		}
	}
	e.buf = append(e.buf, ']')
	return nil
}

// mapValue writes a map as an object with sorted keys.
func (e *encoder) mapValue(mp protoreflect.Map, f *fieldInfo) error {
	start := len(e.entries)
	e.keyKind = f.mapKey
	mp.Range(e.addKey)
	ents := e.entries[start:]
	slices.SortFunc(ents, func(a, b mapEntry) int { return strings.Compare(a.key, b.key) })
	e.buf = append(e.buf, '{')
	var err error
	for i := range ents {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = appendString(e.buf, ents[i].key)
		e.buf = append(e.buf, ':')
		if err = e.value(ents[i].val, &f.value); err != nil {
			err = atPath(err, ents[i].key, "")
			break
		}
	}
	e.buf = append(e.buf, '}')
	clear(e.entries[start:])
	e.entries = e.entries[:start]
	return err
}

// addEntry is the Range callback of mapValue, made once per encoder.
func (e *encoder) addEntry(k protoreflect.MapKey, v protoreflect.Value) bool {
	e.entries = append(e.entries, mapEntry{mapKeyString(k, e.keyKind), v})
	return true
}

func mapKeyString(k protoreflect.MapKey, kind protoreflect.Kind) string {
	switch kind {
	case protoreflect.StringKind:
		return k.String()
	case protoreflect.BoolKind:
		return strconv.FormatBool(k.Bool())
	case protoreflect.Uint32Kind, protoreflect.Uint64Kind, protoreflect.Fixed32Kind, protoreflect.Fixed64Kind:
		return strconv.FormatUint(k.Uint(), 10)
	}
	return strconv.FormatInt(k.Int(), 10)
}

// value writes one singular value: a field's, a list element or a map value.
func (e *encoder) value(v protoreflect.Value, vi *valueInfo) error {
	switch vi.kind {
	case protoreflect.StringKind:
		if vi.raw {
			return e.rawJSON([]byte(v.String()))
		}
		e.buf = appendString(e.buf, v.String())
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return e.message(v.Message(), vi.message())
	case protoreflect.BoolKind:
		e.buf = strconv.AppendBool(e.buf, v.Bool())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		e.buf = strconv.AppendInt(e.buf, v.Int(), 10)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		e.buf = strconv.AppendUint(e.buf, v.Uint(), 10)
	case protoreflect.FloatKind:
		return e.float(v.Float(), 32)
	case protoreflect.DoubleKind:
		return e.float(v.Float(), 64)
	case protoreflect.BytesKind:
		e.buf = append(e.buf, '"')
		e.buf = base64.StdEncoding.AppendEncode(e.buf, v.Bytes())
		e.buf = append(e.buf, '"')
	case protoreflect.EnumKind:
		e.enum(vi, v.Enum())
	default:
		return errors.New("unsupported kind " + vi.kind.String())
	}
	return nil
}

// enum writes an enum value by name, or by number if it has none.
func (e *encoder) enum(vi *valueInfo, n protoreflect.EnumNumber) {
	if ev := vi.enum.Values().ByNumber(n); ev != nil {
		e.buf = appendString(e.buf, string(ev.Name()))
	} else {
		e.buf = strconv.AppendInt(e.buf, int64(n), 10)
	}
}

// float writes f as encoding/json does.
func (e *encoder) float(f float64, bits int) error {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return errors.New("unsupported value: " + strconv.FormatFloat(f, 'g', -1, bits))
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	e.buf = strconv.AppendFloat(e.buf, f, format, -1, bits)
	if format == 'e' {
		// e-09 → e-9
		n := len(e.buf)
		if n >= 4 && e.buf[n-4] == 'e' && e.buf[n-3] == '-' && e.buf[n-2] == '0' {
			e.buf[n-2] = e.buf[n-1]
			e.buf = e.buf[:n-1]
		}
	}
	return nil
}

// rawJSON writes a string field that holds JSON text as that JSON value.
func (e *encoder) rawJSON(s []byte) error {
	out, err := appendCompact(e.buf, s)
	if err != nil {
		return errors.New("field holds invalid JSON: " + err.Error())
	}
	e.buf = out
	return nil
}

// marshalError locates an encoding failure.
type marshalError struct {
	path string
	err  error
}

func (e *marshalError) Error() string { return e.path + ": " + e.err.Error() }
func (e *marshalError) Unwrap() error { return e.err }

// atPath prefixes err's path with a field name or an index/key step.
func atPath(err error, name, index string) error {
	me, ok := err.(*marshalError)
	if !ok {
		me = &marshalError{err: err}
	}
	step := name
	if index != "" {
		step = index
	}
	if me.path == "" || me.path[0] == '[' {
		me.path = step + me.path
	} else {
		me.path = step + "." + me.path
	}
	return me
}

func marshalFailed(err error) error {
	return errors.New("k8sjson: cannot marshal " + err.Error())
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string exactly as encoding/json writes it
// (and so Kubernetes): <, > and & escaped, invalid UTF-8 as \ufffd.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if htmlSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				// control characters, <, > and &
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// htmlSafe marks the ASCII bytes written as they are.
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()
