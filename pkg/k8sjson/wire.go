package k8sjson

import (
	"encoding/base64"
	"math"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The wire walk: Marshal has protobuf's fast path write the message's
// binary form and then walks those bytes with the cached field tables,
// which is several times cheaper than asking protoreflect for each field of
// a generated message. The binary form says exactly what Kubernetes JSON
// needs: plain proto3 scalars appear only when non-zero, `optional` ones
// whenever set, set messages always (an empty one as zero bytes), lists
// and maps when non-empty; and Go's proto.Marshal writes fields in number
// order with each list contiguous. The protoreflect walk (encode.go) stays
// as the fallback and the tests hold the two to the same output.

// wireEntry is one map entry read from the wire.
type wireEntry struct {
	key string
	typ protowire.Type
	num uint64 // varint and fixed values
	raw []byte // length-delimited values
}

// view returns b as a string without copying; only for use while the
// encoder's wire buffer is unchanged.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// wireType is the wire type values of a kind have, unpacked.
func wireType(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind:
		return protowire.BytesType
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	case protoreflect.GroupKind:
		return protowire.StartGroupType
	}
	return protowire.VarintType
}

// consumeValue reads one value of wire type typ from the front of b.
func consumeValue(typ protowire.Type, b []byte) (u uint64, raw, rest []byte, err error) {
	var n int
	switch typ {
	case protowire.VarintType:
		u, n = protowire.ConsumeVarint(b)
	case protowire.Fixed32Type:
		var v uint32
		v, n = protowire.ConsumeFixed32(b)
		u = uint64(v)
	case protowire.Fixed64Type:
		u, n = protowire.ConsumeFixed64(b)
	case protowire.BytesType:
		raw, n = protowire.ConsumeBytes(b)
	default:
		return 0, nil, nil, errWire
	}
	if n < 0 {
		return 0, nil, nil, errWire
	}
	return u, raw, b[n:], nil
}

// wrapWire locates err like atPath, leaving errWire as it is.
func wrapWire(err error, name, index string) error {
	if err == errWire {
		return err
	}
	return atPath(err, name, index)
}

// wireMessage writes the message whose binary form is b.
func (e *encoder) wireMessage(b []byte, mi *messageInfo) error {
	if mi.wk != wkNone {
		return e.wireWellKnown(b, mi)
	}
	e.buf = append(e.buf, '{')
	first := true
	next := 0
	last := protowire.Number(0)
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errWire
		}
		f := mi.field(num)
		if f == nil { // unknown to this schema: skipped, as Unmarshal would drop it
			m := protowire.ConsumeFieldValue(num, typ, b[n:])
			if m < 0 {
				return errWire
			}
			b = b[n+m:]
			continue
		}
		if num <= last {
			return errWire // out of order, or a field split in two
		}
		last = num
		if mi.hasAlwaysEmit {
			first = e.alwaysEmit(mi, next, f.index, first)
			next = f.index + 1
		}
		if !first {
			e.buf = append(e.buf, ',')
		}
		first = false
		e.buf = append(e.buf, f.key...)
		var err error
		switch {
		case f.list:
			b, err = e.wireList(b, num, f)
		case f.isMap:
			b, err = e.wireMap(b, num, f)
		default:
			var u uint64
			var raw []byte
			if u, raw, b, err = consumeValue(typ, b[n:]); err == nil {
				err = e.wireValue(&f.value, typ, u, raw)
			}
		}
		if err != nil {
			return wrapWire(err, f.name, "")
		}
	}
	if mi.hasAlwaysEmit {
		e.alwaysEmit(mi, next, len(mi.fields), first)
	}
	e.buf = append(e.buf, '}')
	return nil
}

// wireList writes the records of list field num at the front of b and
// returns the rest.
func (e *encoder) wireList(b []byte, num protowire.Number, f *fieldInfo) ([]byte, error) {
	vi := &f.value
	elemType := wireType(vi.kind)
	packable := elemType != protowire.BytesType && elemType != protowire.StartGroupType
	e.buf = append(e.buf, '[')
	i := 0
	for len(b) > 0 {
		n2, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, errWire
		}
		if n2 != num {
			break
		}
		u, raw, rest, err := consumeValue(typ, b[n:])
		if err != nil {
			return nil, err
		}
		b = rest
		if packable && typ == protowire.BytesType {
			for len(raw) > 0 {
				if u, _, raw, err = consumeValue(elemType, raw); err != nil {
					return nil, err
				}
				if i > 0 {
					e.buf = append(e.buf, ',')
				}
				if err := e.wireValue(vi, elemType, u, nil); err != nil {
					return nil, wrapWire(err, "", "["+strconv.Itoa(i)+"]")
				}
				i++
			}
			continue
		}
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if err := e.wireValue(vi, typ, u, raw); err != nil {
			return nil, wrapWire(err, "", "["+strconv.Itoa(i)+"]")
		}
		i++
	}
	e.buf = append(e.buf, ']')
	return b, nil
}

// wireMap writes the entries of map field num at the front of b, sorted by
// key, and returns the rest.
func (e *encoder) wireMap(b []byte, num protowire.Number, f *fieldInfo) ([]byte, error) {
	vi := &f.value
	valType := wireType(vi.kind)
	start := len(e.wentries)
	defer func() {
		clear(e.wentries[start:])
		e.wentries = e.wentries[:start]
	}()
	for len(b) > 0 {
		n2, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, errWire
		}
		if n2 != num {
			break
		}
		if typ != protowire.BytesType {
			return nil, errWire
		}
		entry, m := protowire.ConsumeBytes(b[n:])
		if m < 0 {
			return nil, errWire
		}
		b = b[n+m:]
		we := wireEntry{typ: valType}
		var key uint64
		var keyRaw []byte
		for len(entry) > 0 {
			en, et, k := protowire.ConsumeTag(entry)
			if k < 0 {
				return nil, errWire
			}
			u, raw, rest, err := consumeValue(et, entry[k:])
			if err != nil {
				return nil, err
			}
			entry = rest
			switch en {
			case 1:
				if et != wireType(f.mapKey) {
					return nil, errWire
				}
				key, keyRaw = u, raw
			case 2:
				we.typ, we.num, we.raw = et, u, raw
			}
		}
		we.key = wireMapKey(f.mapKey, key, keyRaw)
		e.wentries = append(e.wentries, we)
	}
	ents := e.wentries[start:]
	slices.SortFunc(ents, func(a, b wireEntry) int { return strings.Compare(a.key, b.key) })
	e.buf = append(e.buf, '{')
	for i := range ents {
		if i > 0 {
			if ents[i].key == ents[i-1].key {
				return nil, errWire // a key twice: not what proto.Marshal writes
			}
			e.buf = append(e.buf, ',')
		}
		e.buf = appendString(e.buf, ents[i].key)
		e.buf = append(e.buf, ':')
		if err := e.wireValue(vi, ents[i].typ, ents[i].num, ents[i].raw); err != nil {
			return nil, wrapWire(err, ents[i].key, "")
		}
	}
	e.buf = append(e.buf, '}')
	return b, nil
}

func wireMapKey(kind protoreflect.Kind, u uint64, raw []byte) string {
	switch kind {
	case protoreflect.StringKind:
		return view(raw)
	case protoreflect.BoolKind:
		return strconv.FormatBool(u != 0)
	case protoreflect.Int32Kind:
		return strconv.FormatInt(int64(int32(u)), 10)
	case protoreflect.Int64Kind, protoreflect.Sfixed64Kind:
		return strconv.FormatInt(int64(u), 10)
	case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		return strconv.FormatInt(protowire.DecodeZigZag(u), 10)
	case protoreflect.Sfixed32Kind:
		return strconv.FormatInt(int64(int32(uint32(u))), 10)
	}
	return strconv.FormatUint(u, 10)
}

// wireValue writes one value read from the wire.
func (e *encoder) wireValue(vi *valueInfo, typ protowire.Type, u uint64, raw []byte) error {
	if typ != wireType(vi.kind) {
		return errWire
	}
	switch vi.kind {
	case protoreflect.StringKind:
		if vi.raw {
			return e.rawJSON(raw)
		}
		e.buf = appendString(e.buf, view(raw))
	case protoreflect.MessageKind:
		return e.wireMessage(raw, vi.message())
	case protoreflect.BoolKind:
		e.buf = strconv.AppendBool(e.buf, u != 0)
	case protoreflect.Int32Kind:
		e.buf = strconv.AppendInt(e.buf, int64(int32(u)), 10)
	case protoreflect.Int64Kind, protoreflect.Sfixed64Kind:
		e.buf = strconv.AppendInt(e.buf, int64(u), 10)
	case protoreflect.Sint32Kind:
		e.buf = strconv.AppendInt(e.buf, int64(int32(protowire.DecodeZigZag(u&math.MaxUint32))), 10)
	case protoreflect.Sint64Kind:
		e.buf = strconv.AppendInt(e.buf, protowire.DecodeZigZag(u), 10)
	case protoreflect.Sfixed32Kind:
		e.buf = strconv.AppendInt(e.buf, int64(int32(uint32(u))), 10)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		e.buf = strconv.AppendUint(e.buf, uint64(uint32(u)), 10)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		e.buf = strconv.AppendUint(e.buf, u, 10)
	case protoreflect.FloatKind:
		return e.float(float64(math.Float32frombits(uint32(u))), 32)
	case protoreflect.DoubleKind:
		return e.float(math.Float64frombits(u), 64)
	case protoreflect.BytesKind:
		e.buf = append(e.buf, '"')
		e.buf = base64.StdEncoding.AppendEncode(e.buf, raw)
		e.buf = append(e.buf, '"')
	case protoreflect.EnumKind:
		e.enum(vi, protoreflect.EnumNumber(int32(u)))
	default:
		return errWire
	}
	return nil
}

// wireWellKnown writes a well-known type from its binary form.
func (e *encoder) wireWellKnown(b []byte, mi *messageInfo) error {
	var nums [3]int64
	var str []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errWire
		}
		u, raw, rest, err := consumeValue(typ, b[n:])
		if err != nil {
			return err
		}
		b = rest
		for i, fd := range mi.wkFields {
			if fd == nil || fd.Number() != num {
				continue
			}
			if typ != wireType(fd.Kind()) {
				return errWire
			}
			switch fd.Kind() {
			case protoreflect.StringKind:
				str = raw
			case protoreflect.Int32Kind:
				nums[i] = int64(int32(u))
			default:
				nums[i] = int64(u)
			}
		}
	}
	return e.wellKnownValue(mi.wk, nums, view(str))
}
