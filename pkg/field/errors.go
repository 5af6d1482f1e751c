package field

import (
	"fmt"
	"strings"
)

// ErrorType is the kind of a field error; its value is the Status cause reason.
type ErrorType string

const (
	ErrorTypeRequired     ErrorType = "FieldValueRequired"
	ErrorTypeInvalid      ErrorType = "FieldValueInvalid"
	ErrorTypeNotSupported ErrorType = "FieldValueNotSupported"
	ErrorTypeDuplicate    ErrorType = "FieldValueDuplicate"
	ErrorTypeForbidden    ErrorType = "FieldValueForbidden"
	ErrorTypeTooLong      ErrorType = "FieldValueTooLong"
	ErrorTypeTypeInvalid  ErrorType = "FieldValueTypeInvalid"
	ErrorTypeNotFound     ErrorType = "FieldValueNotFound"
)

// String is the phrase Kubernetes prints for the type.
func (t ErrorType) String() string {
	switch t {
	case ErrorTypeRequired:
		return "Required value"
	case ErrorTypeInvalid:
		return "Invalid value"
	case ErrorTypeNotSupported:
		return "Unsupported value"
	case ErrorTypeDuplicate:
		return "Duplicate value"
	case ErrorTypeForbidden:
		return "Forbidden"
	case ErrorTypeTooLong:
		return "Too long"
	case ErrorTypeTypeInvalid:
		return "Invalid value"
	case ErrorTypeNotFound:
		return "Not found"
	}
	return string(t)
}

// Error is one field's failure.
type Error struct {
	Type     ErrorType
	Field    string
	BadValue any
	Detail   string
	// omitValue is set for types whose message carries no value.
	omitValue bool
}

// Error reads like Kubernetes': `spec.replicas: Invalid value: -1: must be greater than or equal to 0`.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", e.Field, e.Type)
	if !e.omitValue {
		switch v := e.BadValue.(type) {
		case string:
			fmt.Fprintf(&b, ": %q", v)
		case nil:
		default:
			fmt.Fprintf(&b, ": %v", v)
		}
	}
	if e.Detail != "" {
		fmt.Fprintf(&b, ": %s", e.Detail)
	}
	return b.String()
}

// ErrorBody is the message without the field path, as stored in a Status cause.
func (e *Error) ErrorBody() string {
	s := e.Error()
	return strings.TrimPrefix(s, e.Field+": ")
}

// ErrorList is a list of field errors.
type ErrorList []*Error

// Error renders the list as Kubernetes does: one error alone, several as [a, b].
func (l ErrorList) Error() string {
	if len(l) == 1 {
		return l[0].Error()
	}
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = e.Error()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Required reports a missing value.
func Required(p *Path, detail string) *Error {
	return &Error{Type: ErrorTypeRequired, Field: p.String(), Detail: detail, omitValue: true}
}

// Invalid reports a value that breaks a rule.
func Invalid(p *Path, value any, detail string) *Error {
	return &Error{Type: ErrorTypeInvalid, Field: p.String(), BadValue: value, Detail: detail}
}

// NotSupported reports a value outside a fixed set.
func NotSupported(p *Path, value any, valid []string) *Error {
	quoted := make([]string, len(valid))
	for i, v := range valid {
		quoted[i] = fmt.Sprintf("%q", v)
	}
	return &Error{Type: ErrorTypeNotSupported, Field: p.String(), BadValue: value,
		Detail: "supported values: " + strings.Join(quoted, ", ")}
}

// Duplicate reports a value that must be unique.
func Duplicate(p *Path, value any) *Error {
	return &Error{Type: ErrorTypeDuplicate, Field: p.String(), BadValue: value}
}

// Forbidden reports a field that may not be set.
func Forbidden(p *Path, detail string) *Error {
	return &Error{Type: ErrorTypeForbidden, Field: p.String(), Detail: detail, omitValue: true}
}

// TooLong reports a value over its length limit.
func TooLong(p *Path, value any, max int) *Error {
	return &Error{Type: ErrorTypeTooLong, Field: p.String(), BadValue: value,
		Detail: fmt.Sprintf("must have at most %d bytes", max), omitValue: true}
}

// TypeInvalid reports a value of the wrong JSON type.
func TypeInvalid(p *Path, value any, detail string) *Error {
	return &Error{Type: ErrorTypeTypeInvalid, Field: p.String(), BadValue: value, Detail: detail}
}
