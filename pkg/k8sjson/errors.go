package k8sjson

import (
	"errors"
	"strconv"
	"strings"
)

// Reason says why a field was refused; the apiserver uses it as the reason
// of a Status cause.
type Reason string

const (
	// ReasonTypeInvalid: the JSON value has the wrong type for the field
	// ("replicas": "3"), or a number does not fit it.
	ReasonTypeInvalid Reason = "FieldValueTypeInvalid"
	// ReasonValueInvalid: the JSON type is right but the text is not
	// (a time that is not RFC 3339, bad base64, a bad duration).
	ReasonValueInvalid Reason = "FieldValueInvalid"
	// ReasonUnknown: the object has a field the type does not.
	ReasonUnknown Reason = "FieldUnknown"
	// ReasonDuplicate: the object names a field twice.
	ReasonDuplicate Reason = "FieldDuplicate"
	// ReasonMalformed: the input is not JSON.
	ReasonMalformed Reason = "Malformed"
)

// FieldError is one failure to decode, located by its field path in
// Kubernetes' form (spec.template.spec.containers[0].ports[1].containerPort,
// map entries as spec.nodeSelector.disk). Path is empty for the top level.
type FieldError struct {
	Path    string
	Reason  Reason
	Message string
	// Offset is the number of bytes of input read when the error was found,
	// as in encoding/json's SyntaxError.
	Offset int64
}

// Error returns the message, which reads like Kubernetes' own:
//
//	json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32
//	unknown field "spec.containers[0].imagee"
//	invalid character '}' looking for beginning of value (offset 17)
func (e *FieldError) Error() string {
	if e.Reason == ReasonMalformed {
		return e.Message + " (offset " + strconv.FormatInt(e.Offset, 10) + ")"
	}
	return e.Message
}

// StrictError lists the unknown and duplicate fields Unmarshal found in
// Strict mode. The message was otherwise decoded completely.
type StrictError struct {
	Errors []*FieldError
}

// Error reads like Kubernetes': strict decoding error: unknown field "spec.foo", duplicate field "metadata.name".
func (e *StrictError) Error() string {
	var b strings.Builder
	b.WriteString("strict decoding error: ")
	for i, fe := range e.Errors {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(fe.Message)
	}
	return b.String()
}

// Unwrap gives errors.As access to each *FieldError.
func (e *StrictError) Unwrap() []error {
	errs := make([]error, len(e.Errors))
	for i, fe := range e.Errors {
		errs[i] = fe
	}
	return errs
}

// FieldErrors returns the field errors carried by err: the one *FieldError,
// or all of a *StrictError's, or nil.
func FieldErrors(err error) []*FieldError {
	var se *StrictError
	if errors.As(err, &se) {
		return se.Errors
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return []*FieldError{fe}
	}
	return nil
}

// errWire: protobuf bytes not in the form Go's proto.Marshal writes; Marshal
// then falls back from the wire walk to the protoreflect walk.
var errWire = errors.New("k8sjson: protobuf wire form not as expected")

var (
	_ error  = (*FieldError)(nil)
	_ error  = (*StrictError)(nil)
	_ Option = FieldValidation(0)
)

// maxStrictErrors bounds the unknown/duplicate reports of one document, as
// Kubernetes does.
const maxStrictErrors = 100
