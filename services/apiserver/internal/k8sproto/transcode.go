package k8sproto

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// ToJSON turns a body in Kubernetes' protobuf encoding into the Kubernetes
// JSON of the same object, apiVersion and kind included. Every error is an
// *Error naming where the body went wrong.
func ToJSON(body []byte) ([]byte, error) {
	env, err := readEnvelope(body)
	if err != nil {
		return nil, err
	}
	if env.contentEncoding != "" {
		return nil, errorf("", ReasonMalformed, "content encoding %q is not supported", env.contentEncoding)
	}
	if env.contentType != "" && env.contentType != ContentType {
		return nil, errorf("", ReasonMalformed, "content type %q of the raw object is not %s", env.contentType, ContentType)
	}
	m := fields.lookup(env.apiVersion, env.kind)
	if m == nil {
		return nil, errorf("", ReasonMalformed, "no kind %q is registered for version %q", env.kind, env.apiVersion)
	}
	obj := map[string]any{"apiVersion": env.apiVersion, "kind": env.kind}
	if err := decodeMessage(env.raw, m, obj, ""); err != nil {
		return nil, err
	}
	return json.Marshal(obj)
}

// lookup finds the message an envelope names; "*" stands for every apiVersion
// (DeleteOptions is sent under the apiVersion of the resource's group).
func (t *table) lookup(apiVersion, kind string) *message {
	if m := t.kinds[[2]string{apiVersion, kind}]; m != nil {
		return m
	}
	if apiVersion == "" {
		return nil
	}
	return t.kinds[[2]string{"*", kind}]
}

// decodeMessage adds the fields of m found in b to obj. A message field seen
// twice is merged and a scalar's last value wins, as protobuf decoders do.
func decodeMessage(b []byte, m *message, obj map[string]any, path string) error {
	return walk(b, path, func(num protowire.Number, typ protowire.Type, v []byte) error {
		fd := m.fields[int32(num)]
		if fd == nil {
			return errorf(path, ReasonUnknown, "unknown field number %d in Kubernetes message %s", num, m.name)
		}
		p := child(path, fd.json)
		switch {
		case fd.inline:
			if typ != protowire.BytesType {
				return wrongType(p, typ)
			}
			return decodeMessage(v, fd.elem.msg, obj, path)
		case fd.isMap:
			return decodeMapEntry(v, typ, fd, obj, p)
		case fd.repeated:
			return decodeRepeated(v, typ, fd, obj, p)
		case fd.elem.kind == kMessage:
			if typ != protowire.BytesType {
				return wrongType(p, typ)
			}
			sub, _ := obj[fd.json].(map[string]any)
			if sub == nil {
				sub = map[string]any{}
				obj[fd.json] = sub
			}
			return decodeMessage(v, fd.elem.msg, sub, p)
		}
		val, present, err := decodeValue(v, typ, fd.elem, p)
		if err != nil {
			return err
		}
		if present && (fd.keepZero || !isZero(val)) {
			obj[fd.json] = val
		} else {
			delete(obj, fd.json)
		}
		return nil
	})
}

// decodeRepeated appends one element, or a packed run of varints, to a list.
func decodeRepeated(v []byte, typ protowire.Type, fd *fieldDesc, obj map[string]any, p string) error {
	list, _ := obj[fd.json].([]any)
	if typ == protowire.BytesType && isVarint(fd.elem.kind) {
		for len(v) > 0 {
			x, n := protowire.ConsumeVarint(v)
			if n < 0 {
				return errorf(p, ReasonMalformed, "packed values: %v", protowire.ParseError(n))
			}
			list = append(list, varintValue(x, fd.elem.kind))
			v = v[n:]
		}
		obj[fd.json] = list
		return nil
	}
	ip := p + "[" + strconv.Itoa(len(list)) + "]"
	var val any
	if fd.elem.kind == kMessage {
		if typ != protowire.BytesType {
			return wrongType(ip, typ)
		}
		sub := map[string]any{}
		if err := decodeMessage(v, fd.elem.msg, sub, ip); err != nil {
			return err
		}
		val = sub
	} else {
		var err error
		if val, _, err = decodeValue(v, typ, fd.elem, ip); err != nil {
			return err
		}
	}
	obj[fd.json] = append(list, val)
	return nil
}

// decodeMapEntry adds one {key=1, value=2} entry to a map.
func decodeMapEntry(v []byte, typ protowire.Type, fd *fieldDesc, obj map[string]any, p string) error {
	if typ != protowire.BytesType {
		return wrongType(p, typ)
	}
	var key, val any
	err := walk(v, p, func(num protowire.Number, typ protowire.Type, v []byte) error {
		var err error
		switch num {
		case 1:
			key, _, err = decodeValue(v, typ, fd.key, p)
		case 2:
			val, _, err = decodeValue(v, typ, fd.elem, p)
		default:
			err = errorf(p, ReasonUnknown, "unknown field number %d in a map entry", num)
		}
		return err
	})
	if err != nil {
		return err
	}
	k, _ := key.(string) // the table has string keys only
	if val == nil {
		val = zeroOf(fd.elem.kind)
	}
	m, _ := obj[fd.json].(map[string]any)
	if m == nil {
		m = map[string]any{}
		obj[fd.json] = m
	}
	m[k] = val
	return nil
}

// decodeValue reads one value that is not a message of the table. present is
// false for an empty Time, which Kubernetes writes for a zero time.
func decodeValue(v []byte, typ protowire.Type, vt valueType, p string) (val any, present bool, err error) {
	if isVarint(vt.kind) {
		if typ != protowire.VarintType {
			return nil, false, wrongType(p, typ)
		}
		x, _ := protowire.ConsumeVarint(v)
		return varintValue(x, vt.kind), true, nil
	}
	if typ != protowire.BytesType {
		return nil, false, wrongType(p, typ)
	}
	switch vt.kind {
	case kString:
		return string(v), true, nil
	case kBytes:
		return append([]byte{}, v...), true, nil
	case kTime, kMicroTime:
		return decodeTime(v, vt.kind, p)
	case kQuantity:
		s, err := decodeQuantity(v, p)
		return s, true, err
	case kIntOrString:
		val, err := decodeIntOrString(v, p)
		return val, true, err
	case kRawJSON:
		return decodeRawJSON(v, p)
	}
	return nil, false, fmt.Errorf("k8sproto: kind %d has no decoder", vt.kind)
}

func isVarint(k kind) bool { return k == kBool || k == kInt32 || k == kInt64 }

// varintValue reads a varint as its field's type: int32 keeps the low 32
// bits (a negative int32 is sent sign-extended to 64).
func varintValue(x uint64, k kind) any {
	switch k {
	case kBool:
		return x != 0
	case kInt32:
		return int64(int32(x))
	}
	return int64(x)
}

func zeroOf(k kind) any {
	switch k {
	case kBool:
		return false
	case kInt32, kInt64:
		return int64(0)
	case kBytes:
		return []byte{}
	}
	return ""
}

func isZero(v any) bool {
	switch x := v.(type) {
	case bool:
		return !x
	case int64:
		return x == 0
	case string:
		return x == ""
	case []byte:
		return len(x) == 0
	}
	return false
}

// rfc3339Micro is the JSON form of a MicroTime.
const rfc3339Micro = "2006-01-02T15:04:05.000000Z07:00"

// decodeTime reads Time and MicroTime: {seconds=1, nanos=2}. Kubernetes
// writes a zero time as an empty message, which JSON leaves out.
func decodeTime(v []byte, k kind, p string) (any, bool, error) {
	if len(v) == 0 {
		return nil, false, nil
	}
	var sec, nsec int64
	err := walk(v, p, func(num protowire.Number, typ protowire.Type, v []byte) error {
		if typ != protowire.VarintType {
			return wrongType(p, typ)
		}
		x, _ := protowire.ConsumeVarint(v)
		switch num {
		case 1:
			sec = int64(x)
		case 2:
			nsec = int64(int32(x))
		default:
			return errorf(p, ReasonUnknown, "unknown field number %d in Kubernetes message meta.v1.Time", num)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	t := time.Unix(sec, nsec).UTC()
	if k == kMicroTime {
		return t.Format(rfc3339Micro), true, nil
	}
	return t.Format(time.RFC3339), true, nil
}

// decodeQuantity reads Quantity: {string=1}, written to JSON as its string.
func decodeQuantity(v []byte, p string) (string, error) {
	var s string
	err := walk(v, p, func(num protowire.Number, typ protowire.Type, v []byte) error {
		if num != 1 {
			return errorf(p, ReasonUnknown, "unknown field number %d in Kubernetes message resource.Quantity", num)
		}
		if typ != protowire.BytesType {
			return wrongType(p, typ)
		}
		s = string(v)
		return nil
	})
	return s, err
}

// decodeIntOrString reads IntOrString: {type=1, intVal=2, strVal=3}; type 1
// is a string, anything else an int, as Kubernetes reads it.
func decodeIntOrString(v []byte, p string) (any, error) {
	var isString bool
	var i int64
	var s string
	err := walk(v, p, func(num protowire.Number, typ protowire.Type, v []byte) error {
		want := protowire.VarintType
		if num == 3 {
			want = protowire.BytesType
		}
		if num < 1 || num > 3 {
			return errorf(p, ReasonUnknown, "unknown field number %d in Kubernetes message intstr.IntOrString", num)
		}
		if typ != want {
			return wrongType(p, typ)
		}
		x, _ := protowire.ConsumeVarint(v)
		switch num {
		case 1:
			isString = x == 1
		case 2:
			i = int64(int32(x))
		case 3:
			s = string(v)
		}
		return nil
	})
	if isString {
		return s, err
	}
	return i, err
}

// decodeRawJSON reads FieldsV1: {raw=1} whose bytes are JSON.
func decodeRawJSON(v []byte, p string) (any, bool, error) {
	var raw []byte
	err := walk(v, p, func(num protowire.Number, typ protowire.Type, v []byte) error {
		if num != 1 {
			return errorf(p, ReasonUnknown, "unknown field number %d in Kubernetes message meta.v1.FieldsV1", num)
		}
		if typ != protowire.BytesType {
			return wrongType(p, typ)
		}
		raw = v
		return nil
	})
	if err != nil || len(raw) == 0 {
		return nil, false, err
	}
	if !json.Valid(raw) {
		return nil, false, errorf(p, ReasonValueInvalid, "embedded JSON is not valid")
	}
	return json.RawMessage(append([]byte{}, raw...)), true, nil
}

func wrongType(p string, typ protowire.Type) *Error {
	return errorf(p, ReasonTypeInvalid, "unexpected wire type %d", typ)
}

func child(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
