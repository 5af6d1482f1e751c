package k8sproto

import "fmt"

// Reasons an Error gives; the REST layer uses them as Status cause reasons,
// the same words the JSON decoder uses for the same faults.
const (
	// ReasonUnknown: a field number the Kubernetes message does not have.
	ReasonUnknown = "FieldUnknown"
	// ReasonTypeInvalid: a known field sent with another wire type.
	ReasonTypeInvalid = "FieldValueTypeInvalid"
	// ReasonValueInvalid: a value the field's type cannot hold (JSON that is not JSON).
	ReasonValueInvalid = "FieldValueInvalid"
	// ReasonMalformed: bytes that are not protobuf, or not Kubernetes' envelope.
	ReasonMalformed = "Malformed"
)

// Error is a body this package refuses, with the field path where it went wrong
// ("" for the envelope or the object itself).
type Error struct {
	Field   string
	Reason  string
	Message string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return "protobuf body: " + e.Message
	}
	return fmt.Sprintf("protobuf body: %s: %s", e.Field, e.Message)
}

func errorf(path, reason, format string, args ...any) *Error {
	return &Error{Field: path, Reason: reason, Message: fmt.Sprintf(format, args...)}
}
