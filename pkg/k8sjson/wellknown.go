package k8sjson

import (
	"errors"
	"strconv"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// The podline.meta.v1 types whose JSON is a scalar, as their Kubernetes
// counterparts' MarshalJSON/UnmarshalJSON write and read them.

const (
	timeLayout      = "2006-01-02T15:04:05Z07:00"        // metav1.Time: RFC 3339, seconds
	microTimeLayout = "2006-01-02T15:04:05.000000Z07:00" // metav1.MicroTime: six fractional digits
)

// wellKnownFields finds the parts of a well-known type, checking their kinds.
func wellKnownFields(wk wellKnown, fds protoreflect.FieldDescriptors) ([3]protoreflect.FieldDescriptor, bool) {
	type part struct {
		name protoreflect.Name
		kind protoreflect.Kind
	}
	var parts []part
	switch wk {
	case wkTime:
		parts = []part{{"seconds", protoreflect.Int64Kind}}
	case wkMicroTime:
		parts = []part{{"seconds", protoreflect.Int64Kind}, {"nanos", protoreflect.Int32Kind}}
	case wkDuration:
		parts = []part{{"nanos", protoreflect.Int64Kind}}
	case wkIntOrString:
		parts = []part{{"type", protoreflect.Int32Kind}, {"int_val", protoreflect.Int32Kind}, {"str_val", protoreflect.StringKind}}
	}
	var out [3]protoreflect.FieldDescriptor
	for i, p := range parts {
		fd := fds.ByName(p.name)
		if fd == nil || fd.Kind() != p.kind || fd.Cardinality() == protoreflect.Repeated {
			return out, false
		}
		out[i] = fd
	}
	return out, true
}

// wellKnown writes a well-known type from a message.
func (e *encoder) wellKnown(m protoreflect.Message, mi *messageInfo) error {
	var nums [3]int64
	var str string
	for i, fd := range mi.wkFields {
		switch {
		case fd == nil:
		case fd.Kind() == protoreflect.StringKind:
			str = m.Get(fd).String()
		default:
			nums[i] = m.Get(fd).Int()
		}
	}
	return e.wellKnownValue(mi.wk, nums, str)
}

// wellKnownValue writes a well-known type from its parts, in the order of
// wellKnownFields: Time (seconds), MicroTime (seconds, nanos), Duration
// (nanos), IntOrString (type, int_val; str_val as str).
func (e *encoder) wellKnownValue(wk wellKnown, nums [3]int64, str string) error {
	switch wk {
	case wkTime, wkMicroTime:
		layout := timeLayout
		if wk == wkTime {
			nums[1] = 0
		} else {
			layout = microTimeLayout
		}
		t := time.Unix(nums[0], nums[1]).UTC()
		if y := t.Year(); y < 0 || y > 9999 {
			return errors.New("time " + strconv.FormatInt(t.Unix(), 10) + ": year outside of range [0,9999]")
		}
		e.buf = append(e.buf, '"')
		e.buf = t.AppendFormat(e.buf, layout)
		e.buf = append(e.buf, '"')
	case wkDuration:
		e.buf = appendString(e.buf, time.Duration(nums[0]).String())
	case wkIntOrString:
		switch nums[0] {
		case 0:
			e.buf = strconv.AppendInt(e.buf, nums[1], 10)
		case 1:
			e.buf = appendString(e.buf, str)
		default:
			return errors.New("impossible IntOrString.Type " + strconv.FormatInt(nums[0], 10))
		}
	}
	return nil
}

func (d *decoder) wellKnown(m protoreflect.Message, mi *messageInfo) error {
	f := &mi.wkFields
	c := d.data[d.pos]
	switch mi.wk {
	case wkTime, wkMicroTime:
		if c != '"' {
			return d.typeError(mi.goType)
		}
		s, err := d.stringValue()
		if err != nil {
			return err
		}
		// Kubernetes reads both with time.RFC3339; a fraction is dropped for
		// Time and kept to the microsecond for MicroTime.
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return d.valueInvalid(d.path(""), err.Error())
		}
		t = t.UTC()
		if y := t.Year(); y < 0 || y > 9999 {
			return d.valueInvalid(d.path(""), "parsing time "+strconv.Quote(s)+": year outside of range [0,9999]")
		}
		m.Set(f[0], protoreflect.ValueOfInt64(t.Unix()))
		if mi.wk == wkMicroTime {
			m.Set(f[1], protoreflect.ValueOfInt32(int32(t.Nanosecond()/1000*1000)))
		}
	case wkDuration:
		if c != '"' {
			return d.typeError(mi.goType)
		}
		s, err := d.stringValue()
		if err != nil {
			return err
		}
		dur, err := time.ParseDuration(s)
		if err != nil {
			return d.valueInvalid(d.path(""), err.Error())
		}
		m.Set(f[0], protoreflect.ValueOfInt64(int64(dur)))
	case wkIntOrString:
		switch {
		case c == '"':
			s, err := d.stringValue()
			if err != nil {
				return err
			}
			m.Set(f[0], protoreflect.ValueOfInt32(1))
			m.Clear(f[1])
			m.Set(f[2], protoreflect.ValueOfString(s))
		case c == '-' || isDigit(c):
			start := d.pos
			lit, err := d.numberToken()
			if err != nil {
				return err
			}
			v, ok := intValue(lit, protoreflect.Int32Kind)
			if !ok {
				d.pos = start
				return d.typeErrorWhat("number "+string(lit), mi.goType)
			}
			m.Clear(f[0])
			m.Set(f[1], v)
			m.Clear(f[2])
		default:
			return d.typeError(mi.goType)
		}
	}
	return nil
}
