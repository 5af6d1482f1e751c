package k8sjson

import (
	"encoding/base64"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Unmarshal decodes the Kubernetes JSON in data into m, which is reset
// first. Unknown and duplicate fields are handled by the FieldValidation
// option (Strict by default): Strict returns them all in one *StrictError
// after decoding everything else, Warn returns a warning for each, Ignore
// drops them. Any other failure is a *FieldError and stops decoding.
func Unmarshal(data []byte, m proto.Message, opts ...Option) (warnings []string, err error) {
	var o options
	for _, opt := range opts {
		opt.apply(&o)
	}
	if m == nil {
		return nil, errors.New("k8sjson: Unmarshal into nil message")
	}
	rm := m.ProtoReflect()
	if !rm.IsValid() {
		return nil, errors.New("k8sjson: Unmarshal into nil " + string(rm.Descriptor().FullName()))
	}
	proto.Reset(m)
	d := decoders.Get().(*decoder)
	d.data, d.opts = data, o
	err = d.top(rm, infoOf(rm.Descriptor()))
	if fe, ok := err.(*FieldError); ok && fe.Reason != ReasonMalformed {
		// encoding/json checks the whole document before decoding, so a
		// syntax error anywhere is what Kubernetes reports.
		if serr := validate(data); serr != nil {
			err = serr
		}
	}
	warnings = d.warnings
	if err == nil && len(d.strict) > 0 {
		err = &StrictError{Errors: d.strict}
	}
	d.reset()
	decoders.Put(d)
	return warnings, err
}

// decoder is the state of one Unmarshal; pooled.
type decoder struct {
	data  []byte
	pos   int
	opts  options
	depth int
	stack []seg // the path to the value being decoded
	skip  []byte
	// scratch holds unescaped strings.
	scratch []byte
	// strict collects unknown/duplicate fields in Strict mode, warnings in Warn.
	strict   []*FieldError
	warnings []string
	reported map[string]struct{}
}

// seg is one step of a path: a field, a list index or a map key.
type seg struct {
	name  string       // field name or map key
	owner *messageInfo // for a field: the message that has it
	index int          // for a list element, with owner nil and name ""
	kind  segKind
}

type segKind uint8

const (
	segField segKind = iota
	segIndex
	segKey
)

var decoders = sync.Pool{New: func() any { return new(decoder) }}

func (d *decoder) reset() {
	d.data = nil
	d.pos, d.depth = 0, 0
	clear(d.stack)
	d.stack = d.stack[:0]
	d.skip = d.skip[:0]
	if cap(d.scratch) > 64<<10 {
		d.scratch = nil
	}
	d.strict, d.warnings, d.reported = nil, nil, nil
}

// validate reports the first syntax error in data, if any.
func validate(data []byte) error {
	d := decoder{data: data}
	d.skipWS()
	if err := d.skipValue(); err != nil {
		return err
	}
	d.skipWS()
	if d.pos < len(data) {
		return d.syntaxError("after top-level value")
	}
	return nil
}

func (d *decoder) top(m protoreflect.Message, mi *messageInfo) error {
	d.skipWS()
	if d.pos >= len(d.data) {
		return d.eof()
	}
	if d.data[d.pos] == 'n' {
		if err := d.literal("null"); err != nil {
			return err
		}
	} else if err := d.messageValue(m, mi); err != nil {
		return err
	}
	d.skipWS()
	if d.pos < len(d.data) {
		return d.syntaxError("after top-level value")
	}
	return nil
}

// messageValue decodes a message from an object, or a well-known type from
// its scalar form.
func (d *decoder) messageValue(m protoreflect.Message, mi *messageInfo) error {
	if mi.wk != wkNone {
		return d.wellKnown(m, mi)
	}
	if d.data[d.pos] != '{' {
		return d.typeError(mi.goType)
	}
	return d.object(m, mi)
}

func (d *decoder) object(m protoreflect.Message, mi *messageInfo) error {
	if d.depth++; d.depth > maxDepth {
		return d.tooDeep()
	}
	d.pos++ // {
	d.skipWS()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		d.depth--
		return nil
	}
	track := d.opts.validation != Ignore
	var seen uint64
	var seenMany []bool
	for {
		if d.pos >= len(d.data) {
			return d.eof()
		}
		if d.data[d.pos] != '"' {
			return d.syntaxError("looking for beginning of object key string")
		}
		raw, flags, err := d.stringToken()
		if err != nil {
			return err
		}
		var f *fieldInfo
		var key string
		if flags == 0 {
			f = mi.byName[string(raw)]
		} else {
			key = d.makeString(raw, flags)
			f = mi.byName[key]
		}
		if err := d.colon(); err != nil {
			return err
		}
		if f == nil {
			if track {
				if key == "" {
					key = string(raw)
				}
				d.strictProblem(ReasonUnknown, d.path(key))
			}
			if err := d.skipValue(); err != nil {
				return err
			}
		} else {
			if track {
				dup := false
				if f.index < 64 {
					dup = seen&(1<<f.index) != 0
					seen |= 1 << f.index
				} else {
					if seenMany == nil {
						seenMany = make([]bool, len(mi.fields))
					}
					dup = seenMany[f.index]
					seenMany[f.index] = true
				}
				if dup {
					d.strictProblem(ReasonDuplicate, d.path(f.name))
				}
			}
			d.stack = append(d.stack, seg{name: f.name, owner: mi})
			if d.pos >= len(d.data) {
				return d.eof()
			}
			if err := d.field(m, f); err != nil {
				return err
			}
			d.stack = d.stack[:len(d.stack)-1]
		}
		d.skipWS()
		if d.pos >= len(d.data) {
			return d.eof()
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.skipWS()
		case '}':
			d.pos++
			d.depth--
			return nil
		default:
			return d.syntaxError("after object key:value pair")
		}
	}
}

// field decodes the value at d.pos into field f of m.
func (d *decoder) field(m protoreflect.Message, f *fieldInfo) error {
	c := d.data[d.pos]
	if c == 'n' {
		if err := d.literal("null"); err != nil {
			return err
		}
		if f.nullable {
			m.Clear(f.fd)
		}
		return nil
	}
	switch {
	case f.list:
		if c != '[' {
			return d.typeError(f.goType())
		}
		m.Clear(f.fd) // a repeated key replaces the list, as encoding/json does
		return d.list(m.Mutable(f.fd).List(), f)
	case f.isMap:
		if c != '{' {
			return d.typeError(f.goType())
		}
		return d.mapObject(m.Mutable(f.fd).Map(), f)
	case f.value.msgDesc != nil:
		return d.messageValue(m.Mutable(f.fd).Message(), f.value.message())
	}
	v, err := d.scalar(&f.value)
	if err != nil {
		return err
	}
	m.Set(f.fd, v)
	return nil
}

func (d *decoder) list(l protoreflect.List, f *fieldInfo) error {
	if d.depth++; d.depth > maxDepth {
		return d.tooDeep()
	}
	d.pos++ // [
	d.skipWS()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		d.depth--
		return nil
	}
	vi := &f.value
	for i := 0; ; i++ {
		if d.pos >= len(d.data) {
			return d.eof()
		}
		d.stack = append(d.stack, seg{index: i, kind: segIndex})
		if vi.msgDesc != nil {
			el := l.NewElement()
			if d.data[d.pos] == 'n' {
				if err := d.literal("null"); err != nil {
					return err
				}
			} else if err := d.messageValue(el.Message(), vi.message()); err != nil {
				return err
			}
			l.Append(el)
		} else {
			v, err := d.scalarOrNull(vi)
			if err != nil {
				return err
			}
			l.Append(v)
		}
		d.stack = d.stack[:len(d.stack)-1]
		d.skipWS()
		if d.pos >= len(d.data) {
			return d.eof()
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.skipWS()
		case ']':
			d.pos++
			d.depth--
			return nil
		default:
			return d.syntaxError("after array element")
		}
	}
}

func (d *decoder) mapObject(mp protoreflect.Map, f *fieldInfo) error {
	if d.depth++; d.depth > maxDepth {
		return d.tooDeep()
	}
	d.pos++ // {
	d.skipWS()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		d.depth--
		return nil
	}
	track := d.opts.validation != Ignore
	// Entries already there came from an earlier copy of this field; find
	// duplicates within this object only.
	var seen map[string]struct{}
	if track && mp.Len() > 0 {
		seen = make(map[string]struct{})
	}
	vi := &f.value
	for {
		if d.pos >= len(d.data) {
			return d.eof()
		}
		if d.data[d.pos] != '"' {
			return d.syntaxError("looking for beginning of object key string")
		}
		raw, flags, err := d.stringToken()
		if err != nil {
			return err
		}
		key := d.makeString(raw, flags)
		if err := d.colon(); err != nil {
			return err
		}
		mk, err := d.mapKey(key, f)
		if err != nil {
			return err
		}
		if track {
			var dup bool
			if seen != nil {
				_, dup = seen[key]
				seen[key] = struct{}{}
			} else {
				dup = mp.Has(mk)
			}
			if dup {
				d.strictProblem(ReasonDuplicate, d.path(key))
			}
		}
		d.stack = append(d.stack, seg{name: key, kind: segKey})
		if d.pos >= len(d.data) {
			return d.eof()
		}
		if vi.msgDesc != nil {
			v := mp.NewValue()
			if d.data[d.pos] == 'n' {
				if err := d.literal("null"); err != nil {
					return err
				}
			} else if err := d.messageValue(v.Message(), vi.message()); err != nil {
				return err
			}
			mp.Set(mk, v)
		} else {
			v, err := d.scalarOrNull(vi)
			if err != nil {
				return err
			}
			mp.Set(mk, v)
		}
		d.stack = d.stack[:len(d.stack)-1]
		d.skipWS()
		if d.pos >= len(d.data) {
			return d.eof()
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.skipWS()
		case '}':
			d.pos++
			d.depth--
			return nil
		default:
			return d.syntaxError("after object key:value pair")
		}
	}
}

func (d *decoder) mapKey(key string, f *fieldInfo) (protoreflect.MapKey, error) {
	var v protoreflect.Value
	switch f.mapKey {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(key).MapKey(), nil
	case protoreflect.BoolKind:
		b, err := strconv.ParseBool(key)
		if err != nil || (key != "true" && key != "false") {
			return protoreflect.MapKey{}, d.valueInvalid(d.path(key), "invalid map key "+strconv.Quote(key))
		}
		v = protoreflect.ValueOfBool(b)
	default:
		var ok bool
		if v, ok = intValue([]byte(key), f.mapKey); !ok {
			return protoreflect.MapKey{}, d.typeErrorWhat("number "+key, (&valueInfo{kind: f.mapKey}).goType())
		}
	}
	return v.MapKey(), nil
}

// scalarOrNull decodes a scalar list element or map value; null is the
// zero value, as encoding/json makes it.
func (d *decoder) scalarOrNull(vi *valueInfo) (protoreflect.Value, error) {
	if d.data[d.pos] == 'n' {
		if err := d.literal("null"); err != nil {
			return protoreflect.Value{}, err
		}
		return zeroValue(vi), nil
	}
	return d.scalar(vi)
}

// scalar decodes a value that is not a message, list or map.
func (d *decoder) scalar(vi *valueInfo) (protoreflect.Value, error) {
	c := d.data[d.pos]
	switch vi.kind {
	case protoreflect.StringKind:
		switch {
		case vi.raw:
			return d.rawValue()
		case c == '"':
			s, err := d.stringValue()
			return protoreflect.ValueOfString(s), err
		case vi.quantity && (c == '-' || isDigit(c)):
			lit, err := d.numberToken()
			return protoreflect.ValueOfString(string(lit)), err
		}
	case protoreflect.BoolKind:
		switch c {
		case 't':
			return protoreflect.ValueOfBool(true), d.literal("true")
		case 'f':
			return protoreflect.ValueOfBool(false), d.literal("false")
		}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if c == '-' || isDigit(c) {
			start := d.pos
			lit, err := d.numberToken()
			if err != nil {
				return protoreflect.Value{}, err
			}
			v, ok := intValue(lit, vi.kind)
			if !ok {
				d.pos = start
				return v, d.typeErrorWhat("number "+string(lit), vi.goType())
			}
			return v, nil
		}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		if c == '-' || isDigit(c) {
			start := d.pos
			lit, err := d.numberToken()
			if err != nil {
				return protoreflect.Value{}, err
			}
			bits := 64
			if vi.kind == protoreflect.FloatKind {
				bits = 32
			}
			f, err := strconv.ParseFloat(string(lit), bits)
			if err != nil {
				d.pos = start
				return protoreflect.Value{}, d.typeErrorWhat("number "+string(lit), vi.goType())
			}
			if bits == 32 {
				return protoreflect.ValueOfFloat32(float32(f)), nil
			}
			return protoreflect.ValueOfFloat64(f), nil
		}
	case protoreflect.BytesKind:
		if c == '"' {
			raw, flags, err := d.stringToken()
			if err != nil {
				return protoreflect.Value{}, err
			}
			if flags != 0 {
				d.scratch = unescape(d.scratch[:0], raw)
				raw = d.scratch
			}
			b := make([]byte, base64.StdEncoding.DecodedLen(len(raw)))
			n, err := base64.StdEncoding.Decode(b, raw)
			if err != nil {
				return protoreflect.Value{}, d.valueInvalid(d.path(""), err.Error())
			}
			return protoreflect.ValueOfBytes(b[:n]), nil
		}
	case protoreflect.EnumKind:
		switch {
		case c == '"':
			s, err := d.stringValue()
			if err != nil {
				return protoreflect.Value{}, err
			}
			ev := vi.enum.Values().ByName(protoreflect.Name(s))
			if ev == nil {
				return protoreflect.Value{}, d.valueInvalid(d.path(""), "unknown value "+strconv.Quote(s)+" for "+string(vi.enum.Name()))
			}
			return protoreflect.ValueOfEnum(ev.Number()), nil
		case c == '-' || isDigit(c):
			start := d.pos
			lit, err := d.numberToken()
			if err != nil {
				return protoreflect.Value{}, err
			}
			v, ok := intValue(lit, protoreflect.Int32Kind)
			if !ok {
				d.pos = start
				return v, d.typeErrorWhat("number "+string(lit), vi.goType())
			}
			return protoreflect.ValueOfEnum(protoreflect.EnumNumber(v.Int())), nil
		}
	}
	return protoreflect.Value{}, d.typeError(vi.goType())
}

// rawValue reads any JSON value into a string field that keeps JSON text.
func (d *decoder) rawValue() (protoreflect.Value, error) {
	start := d.pos
	if err := d.skipValue(); err != nil {
		return protoreflect.Value{}, err
	}
	out, err := appendCompact(d.scratch[:0], d.data[start:d.pos])
	if err != nil {
		return protoreflect.Value{}, err
	}
	d.scratch = out
	return protoreflect.ValueOfString(string(out)), nil
}

// intValue parses an integer literal for a field of the given kind. It
// refuses fractions, exponents and values out of range, as encoding/json
// does for Go integers.
func intValue(lit []byte, kind protoreflect.Kind) (protoreflect.Value, bool) {
	neg := len(lit) > 0 && lit[0] == '-'
	digits := lit
	if neg {
		digits = lit[1:]
	}
	if len(digits) == 0 {
		return protoreflect.Value{}, false
	}
	var u uint64
	for _, c := range digits {
		if !isDigit(c) {
			return protoreflect.Value{}, false
		}
		if u > math.MaxUint64/10 || u == math.MaxUint64/10 && uint64(c-'0') > math.MaxUint64%10 {
			return protoreflect.Value{}, false
		}
		u = u*10 + uint64(c-'0')
	}
	switch kind {
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		if neg && u != 0 || u > math.MaxUint32 {
			return protoreflect.Value{}, false
		}
		return protoreflect.ValueOfUint32(uint32(u)), true
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if neg && u != 0 {
			return protoreflect.Value{}, false
		}
		return protoreflect.ValueOfUint64(u), true
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		if !neg && u > math.MaxInt32 || neg && u > -math.MinInt32 {
			return protoreflect.Value{}, false
		}
		n := int64(u)
		if neg {
			n = -n
		}
		return protoreflect.ValueOfInt32(int32(n)), true
	default: // 64-bit signed
		if !neg && u > math.MaxInt64 || neg && u > 1<<63 {
			return protoreflect.Value{}, false
		}
		n := int64(u)
		if neg {
			n = -n // -(1<<63) wraps to itself
		}
		return protoreflect.ValueOfInt64(n), true
	}
}

func zeroValue(vi *valueInfo) protoreflect.Value {
	switch vi.kind {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString("")
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(false)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(0)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(0)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(0)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(0)
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(0)
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(0)
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(nil)
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(0)
	}
	return protoreflect.Value{}
}

// path renders the current path, with an optional last field or key, in
// Kubernetes' form: spec.containers[0].image, metadata.labels.app.
func (d *decoder) path(last string) string {
	if len(d.stack) == 0 {
		return last
	}
	var b strings.Builder
	for _, s := range d.stack {
		if s.kind == segIndex {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.name)
	}
	if last != "" {
		b.WriteByte('.')
		b.WriteString(last)
	}
	return b.String()
}

// strictProblem records an unknown or duplicate field at path.
func (d *decoder) strictProblem(reason Reason, path string) {
	msg := "unknown field "
	if reason == ReasonDuplicate {
		msg = "duplicate field "
	}
	msg += strconv.Quote(path)
	if d.reported == nil {
		d.reported = make(map[string]struct{})
	}
	if _, ok := d.reported[msg]; ok || len(d.reported) >= maxStrictErrors {
		return
	}
	d.reported[msg] = struct{}{}
	switch d.opts.validation {
	case Strict:
		d.strict = append(d.strict, &FieldError{Path: path, Reason: reason, Message: msg, Offset: int64(d.pos)})
	case Warn:
		d.warnings = append(d.warnings, msg)
	}
}

// typeError reports the value at d.pos as the wrong JSON type for goType.
func (d *decoder) typeError(goType string) error {
	what := "number"
	switch d.data[d.pos] {
	case '"':
		what = "string"
	case '{':
		what = "object"
	case '[':
		what = "array"
	case 't', 'f':
		what = "bool"
	case 'n':
		what = "null"
	default:
		if c := d.data[d.pos]; c != '-' && !isDigit(c) {
			// Not a value at all: a syntax error is the better report.
			return d.syntaxError("looking for beginning of value")
		}
	}
	return d.typeErrorWhat(what, goType)
}

// typeErrorWhat words a type error as encoding/json does (so Kubernetes):
// json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32
func (d *decoder) typeErrorWhat(what, goType string) error {
	var b strings.Builder
	b.WriteString("json: cannot unmarshal ")
	b.WriteString(what)
	owner := -1
	for i := len(d.stack) - 1; i >= 0; i-- {
		if d.stack[i].kind == segField {
			owner = i
			break
		}
	}
	if owner < 0 {
		b.WriteString(" into Go value of type ")
	} else {
		b.WriteString(" into Go struct field ")
		b.WriteString(d.stack[owner].owner.name)
		for _, s := range d.stack[:owner+1] {
			if s.kind == segField {
				b.WriteByte('.')
				b.WriteString(s.name)
			}
		}
		b.WriteString(" of type ")
	}
	b.WriteString(goType)
	return &FieldError{Path: d.path(""), Reason: ReasonTypeInvalid, Message: b.String(), Offset: int64(d.pos)}
}

// valueInvalid reports a value of the right JSON type whose text is wrong.
func (d *decoder) valueInvalid(path, detail string) error {
	msg := detail
	if path != "" {
		msg = path + ": " + detail
	}
	return &FieldError{Path: path, Reason: ReasonValueInvalid, Message: msg, Offset: int64(d.pos)}
}
