package patch

import "errors"

// ErrBadPatch marks a patch that is malformed (bad JSON, a bad pointer, a
// list element without its merge key): the client's request is wrong (400).
var ErrBadPatch = errors.New("bad patch")

// ErrCannotApply marks a well-formed patch that does not apply to the
// object (a failed test op, a path that does not exist): 422.
var ErrCannotApply = errors.New("patch does not apply")

// errJSON marks text MembersOfJSON or DecodeObjectText cannot read: the
// server's own JSON, so a fault of the server's, never the client's.
var errJSON = errors.New("invalid JSON")

type patchError struct {
	kind error
	msg  string
}

func (e *patchError) Error() string        { return e.msg }
func (e *patchError) Is(target error) bool { return target == e.kind }

func badPatch(msg string) error    { return &patchError{kind: ErrBadPatch, msg: msg} }
func cannotApply(msg string) error { return &patchError{kind: ErrCannotApply, msg: msg} }
