package labels

import (
	"errors"
	"fmt"
)

// ErrInvalidSelector is wrapped by every error this package returns for a
// selector that cannot be parsed or built: errors.Is(err, ErrInvalidSelector)
// tells a caller (the apiserver) to answer 400 Bad Request.
var ErrInvalidSelector = errors.New("invalid label selector")

// ParseError is a selector string that does not parse, with the byte offset
// where parsing stopped.
type ParseError struct {
	Selector string
	Position int
	Message  string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("unable to parse label selector %q: %s (at position %d)", e.Selector, e.Message, e.Position)
}

// Unwrap makes errors.Is(err, ErrInvalidSelector) hold.
func (e *ParseError) Unwrap() error { return ErrInvalidSelector }

// requirementError is a requirement that breaks the label rules.
type requirementError struct{ msg string }

func (e *requirementError) Error() string { return e.msg }
func (e *requirementError) Unwrap() error { return ErrInvalidSelector }

func invalidRequirement(format string, args ...any) error {
	return &requirementError{msg: fmt.Sprintf(format, args...)}
}
