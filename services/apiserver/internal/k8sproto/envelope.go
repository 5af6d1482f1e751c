package k8sproto

import (
	"bytes"

	"google.golang.org/protobuf/encoding/protowire"
)

// ContentType is the media type of Kubernetes' protobuf encoding.
const ContentType = "application/vnd.kubernetes.protobuf"

// magic starts every body in Kubernetes' protobuf encoding.
var magic = []byte("k8s\x00")

// envelope is runtime.Unknown: {typeMeta{apiVersion=1, kind=2}=1, raw=2,
// contentEncoding=3, contentType=4}.
type envelope struct {
	apiVersion, kind string
	raw              []byte
	contentEncoding  string
	contentType      string
}

func readEnvelope(body []byte) (*envelope, error) {
	rest, ok := bytes.CutPrefix(body, magic)
	if !ok {
		return nil, errorf("", ReasonMalformed, `does not start with Kubernetes' protobuf prefix "k8s\x00"`)
	}
	env := &envelope{}
	err := walk(rest, "", func(num protowire.Number, typ protowire.Type, v []byte) error {
		if typ != protowire.BytesType {
			return errorf("", ReasonMalformed, "envelope field %d has wire type %d", num, typ)
		}
		switch num {
		case 1:
			return walk(v, "", func(num protowire.Number, typ protowire.Type, v []byte) error {
				if typ != protowire.BytesType || num < 1 || num > 2 {
					return errorf("", ReasonMalformed, "envelope typeMeta has unknown field number %d", num)
				}
				if num == 1 {
					env.apiVersion = string(v)
				} else {
					env.kind = string(v)
				}
				return nil
			})
		case 2:
			env.raw = v
		case 3:
			env.contentEncoding = string(v)
		case 4:
			env.contentType = string(v)
		default:
			return errorf("", ReasonMalformed, "envelope has unknown field number %d", num)
		}
		return nil
	})
	return env, err
}

// walk calls fn for each field of one message's bytes. A varint's value is
// handed over re-encoded, so fn reads every wire type the same way; fixed32
// and fixed64 values are handed over as their bytes. path names the message
// in errors.
func walk(b []byte, path string, fn func(protowire.Number, protowire.Type, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errorf(path, ReasonMalformed, "bad field tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		var v []byte
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n >= 0 {
				v = b[:n]
			}
		}
		if n < 0 {
			return errorf(path, ReasonMalformed, "field %d: %v", num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := fn(num, typ, v); err != nil {
			return err
		}
	}
	return nil
}
