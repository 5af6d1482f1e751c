package server

import (
	"bytes"
	"errors"

	"google.golang.org/protobuf/encoding/protowire"
)

// kubectl and client-go send the bodies of TokenRequest and the self
// reviews in Kubernetes' protobuf: "k8s\x00" and a runtime.Unknown
// {typeMeta=1, raw=2} whose raw is the object. These readers take the few
// fields the apiserver uses, with the field numbers of k8s.io/api's
// generated.proto; everything else in the body is ignored, as the JSON
// decoder ignores it.

var protobufMagic = []byte("k8s\x00")

var errBadProtobuf = errors.New("malformed protobuf body")

// isProtobuf reports whether body is in Kubernetes' protobuf envelope.
func isProtobuf(body []byte) bool { return bytes.HasPrefix(body, protobufMagic) }

// protoFields calls fn for each field of the message in b.
func protoFields(b []byte, fn func(num protowire.Number, typ protowire.Type, val []byte, varint uint64)) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errBadProtobuf
		}
		b = b[n:]
		switch typ {
		case protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return errBadProtobuf
			}
			fn(num, typ, v, 0)
			b = b[m:]
		case protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return errBadProtobuf
			}
			fn(num, typ, nil, v)
			b = b[m:]
		default:
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return errBadProtobuf
			}
			b = b[m:]
		}
	}
	return nil
}

// unwrapProtobuf returns the object inside the envelope (Unknown.raw).
func unwrapProtobuf(body []byte) ([]byte, error) {
	var raw []byte
	err := protoFields(body[len(protobufMagic):], func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) {
		if num == 2 && typ == protowire.BytesType {
			raw = v
		}
	})
	return raw, err
}

// subMessage returns field num of the message in b.
func subMessage(b []byte, num protowire.Number) ([]byte, bool, error) {
	var out []byte
	found := false
	err := protoFields(b, func(n protowire.Number, typ protowire.Type, v []byte, _ uint64) {
		if n == num && typ == protowire.BytesType {
			out, found = v, true
		}
	})
	return out, found, err
}

// tokenRequestFromProto reads TokenRequest.spec {audiences=1,
// boundObjectRef=3 {kind=1, apiVersion=2, name=3, uid=4},
// expirationSeconds=4}.
func tokenRequestFromProto(body []byte) (*tokenRequest, error) {
	obj, err := unwrapProtobuf(body)
	if err != nil {
		return nil, err
	}
	spec, _, err := subMessage(obj, 2)
	if err != nil {
		return nil, err
	}
	tr := &tokenRequest{Kind: "TokenRequest"}
	var bad error
	err = protoFields(spec, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) {
		switch {
		case num == 1 && typ == protowire.BytesType:
			tr.Spec.Audiences = append(tr.Spec.Audiences, string(v))
		case num == 3 && typ == protowire.BytesType:
			tr.Spec.BoundObjectRef = &boundObjectRef{}
			ref := map[protowire.Number]*string{1: &tr.Spec.BoundObjectRef.Kind, 2: &tr.Spec.BoundObjectRef.APIVersion,
				3: &tr.Spec.BoundObjectRef.Name, 4: &tr.Spec.BoundObjectRef.UID}
			bad = protoFields(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) {
				if p := ref[num]; p != nil && typ == protowire.BytesType {
					*p = string(v)
				}
			})
		case num == 4 && typ == protowire.VarintType:
			secs := int64(x)
			tr.Spec.ExpirationSeconds = &secs
		}
	})
	if err == nil {
		err = bad
	}
	return tr, err
}

// tokenReviewFromProto reads TokenReview.spec {token=1, audiences=2}.
func tokenReviewFromProto(body []byte) (*tokenReview, error) {
	obj, err := unwrapProtobuf(body)
	if err != nil {
		return nil, err
	}
	spec, _, err := subMessage(obj, 2)
	if err != nil {
		return nil, err
	}
	review := &tokenReview{}
	err = protoFields(spec, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) {
		switch {
		case num == 1 && typ == protowire.BytesType:
			review.Spec.Token = string(v)
		case num == 2 && typ == protowire.BytesType:
			review.Spec.Audiences = append(review.Spec.Audiences, string(v))
		}
	})
	return review, err
}

// accessReviewFromProto reads (Self)SubjectAccessReview.spec
// {resourceAttributes=1 {namespace=1, verb=2, group=3, version=4,
// resource=5, subresource=6, name=7, fieldSelector=8 {rawSelector=1,
// requirements=2 {key=1, operator=2, values=3}}}, nonResourceAttributes=2
// {path=1, verb=2}, user=3, groups=4, uid=6}; a SelfSubjectAccessReview
// has no fields past 2.
func accessReviewFromProto(body []byte) (*accessReview, error) {
	obj, err := unwrapProtobuf(body)
	if err != nil {
		return nil, err
	}
	spec, _, err := subMessage(obj, 2)
	if err != nil {
		return nil, err
	}
	review := &accessReview{}
	if err := protoFields(spec, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) {
		switch {
		case num == 3 && typ == protowire.BytesType:
			review.Spec.User = string(v)
		case num == 4 && typ == protowire.BytesType:
			review.Spec.Groups = append(review.Spec.Groups, string(v))
		case num == 6 && typ == protowire.BytesType:
			review.Spec.UID = string(v)
		}
	}); err != nil {
		return nil, err
	}
	if b, ok, err := subMessage(spec, 1); err != nil {
		return nil, err
	} else if ok {
		ra := &resourceAttributes{}
		dst := map[protowire.Number]*string{1: &ra.Namespace, 2: &ra.Verb, 3: &ra.Group, 4: &ra.Version, 5: &ra.Resource, 6: &ra.Subresource, 7: &ra.Name}
		if err := protoFields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) {
			if p := dst[num]; p != nil && typ == protowire.BytesType {
				*p = string(v)
			}
		}); err != nil {
			return nil, err
		}
		if ra.FieldSelector, err = fieldSelectorFromProto(b); err != nil {
			return nil, err
		}
		review.Spec.ResourceAttributes = ra
	}
	if b, ok, err := subMessage(spec, 2); err != nil {
		return nil, err
	} else if ok {
		na := &nonResourceAttributes{}
		if err := protoFields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) {
			switch {
			case num == 1 && typ == protowire.BytesType:
				na.Path = string(v)
			case num == 2 && typ == protowire.BytesType:
				na.Verb = string(v)
			}
		}); err != nil {
			return nil, err
		}
		review.Spec.NonResourceAttributes = na
	}
	return review, nil
}

// fieldSelectorFromProto reads ResourceAttributes.fieldSelector (nil when absent).
func fieldSelectorFromProto(resourceAttributes []byte) (*fieldSelectorAttributes, error) {
	b, ok, err := subMessage(resourceAttributes, 8)
	if err != nil || !ok {
		return nil, err
	}
	fs := &fieldSelectorAttributes{}
	var reqs [][]byte
	if err := protoFields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) {
		switch {
		case num == 1 && typ == protowire.BytesType:
			fs.RawSelector = string(v)
		case num == 2 && typ == protowire.BytesType:
			reqs = append(reqs, v)
		}
	}); err != nil {
		return nil, err
	}
	for _, rb := range reqs {
		var r fieldSelectorRequirement
		if err := protoFields(rb, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) {
			if typ != protowire.BytesType {
				return
			}
			switch num {
			case 1:
				r.Key = string(v)
			case 2:
				r.Operator = string(v)
			case 3:
				r.Values = append(r.Values, string(v))
			}
		}); err != nil {
			return nil, err
		}
		fs.Requirements = append(fs.Requirements, r)
	}
	return fs, nil
}
