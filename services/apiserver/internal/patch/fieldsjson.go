package patch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"unicode/utf8"
)

// Members are member paths as a walk finds them, in no order and perhaps
// repeated (two list items with one key).
type Members [][]string

// Set returns the members as a FieldSet.
func (m Members) Set() FieldSet {
	s := make(FieldSet, len(m))
	for _, p := range m {
		s.add(p)
	}
	return s
}

// MarshalFieldsV1 writes the members as FieldSet.MarshalFieldsV1 does,
// sorting m in place.
func (m Members) MarshalFieldsV1() string {
	slices.SortFunc(m, slices.Compare)
	return writeFieldsV1(m)
}

// MembersOfJSON returns the members of a JSON object's fields, those
// FieldsOf returns for its decoded values, read straight from the text: a
// create owns every field of the new object, and this spares it building
// the values and a set. data is one object with no key repeated, as
// k8sjson.Marshal writes it.
func MembersOfJSON(data []byte, skip func(path []string) bool) (Members, error) {
	// Room for about as many members as the text has fields, a few
	// elements deep (colons in values count too, hence the cap).
	n := min(bytes.Count(data, []byte{':'})+1, 64)
	r := fieldsReader{data: data, skip: skip, members: make(Members, 0, n), paths: make([]string, 0, 4*n)}
	r.path, r.names, r.elem = r.pathBuf[:0], r.namesBuf[:0], r.elemBuf[:0]
	r.ws()
	if r.peek() != '{' {
		return nil, r.fail("expected a JSON object")
	}
	if err := r.object(); err != nil {
		return nil, err
	}
	if r.ws(); r.i != len(r.data) {
		return nil, r.fail("unexpected data after the JSON value")
	}
	return r.members, nil
}

// fieldsReader walks JSON text as collect walks values; path and names
// are stacks.
type fieldsReader struct {
	data        []byte
	i           int
	members     Members
	skip        func([]string) bool
	path, names []string
	elem        []byte   // scratch for building elements
	paths       []string // backs the members' paths
	// First backing arrays of the stacks and the scratch.
	pathBuf, namesBuf [16]string
	elemBuf           [64]byte
}

// elements holds the "f:" elements of the field names met so far, up to
// maxElements, so that reading an object allocates no name seen before.
var elements = struct {
	sync.RWMutex
	m map[string]string
}{m: map[string]string{}}

const maxElements = 4096

// intern returns e as a string, from elements when it is there.
func intern(e []byte) string {
	elements.RLock()
	s, ok := elements.m[string(e)]
	elements.RUnlock()
	if ok {
		return s
	}
	s = string(e)
	elements.Lock()
	if len(elements.m) < maxElements {
		elements.m[s] = s
	}
	elements.Unlock()
	return s
}

func (r *fieldsReader) fail(msg string) error {
	return fmt.Errorf("%w: %s at offset %d", errJSON, msg, r.i)
}

func (r *fieldsReader) ws() {
	for r.i < len(r.data) {
		switch r.data[r.i] {
		case ' ', '\t', '\r', '\n':
			r.i++
		default:
			return
		}
	}
}

// peek returns the next byte, 0 at the end.
func (r *fieldsReader) peek() byte {
	if r.i < len(r.data) {
		return r.data[r.i]
	}
	return 0
}

func (r *fieldsReader) push(e string) { r.path = append(r.path, e) }

func (r *fieldsReader) pop() { r.path = r.path[:len(r.path)-1] }

// add makes the current path a member. The members' paths are cut from
// one growing array, whose full slices make any append copy.
func (r *fieldsReader) add() {
	start := len(r.paths)
	r.paths = append(r.paths, r.path...)
	r.members = append(r.members, r.paths[start:len(r.paths):len(r.paths)])
}

// object reads the fields of the object at r.i (collectObject).
func (r *fieldsReader) object() error {
	r.i++ // '{'
	if r.ws(); r.peek() == '}' {
		r.i++
		return nil
	}
	for {
		r.ws()
		raw, err := r.str()
		if err != nil {
			return err
		}
		r.elem = append(r.elem[:0], "f:"...)
		if r.elem, err = appendUnquoted(r.elem, raw); err != nil {
			return r.fail(err.Error())
		}
		if r.ws(); r.peek() != ':' {
			return r.fail("expected ':'")
		}
		r.i++
		r.ws()
		e := intern(r.elem)
		r.push(e)
		if r.skip != nil && r.skip(r.path) {
			err = r.skipValue()
		} else {
			r.names = append(r.names, e[2:])
			err = r.value()
			r.names = r.names[:len(r.names)-1]
		}
		r.pop()
		if err != nil {
			return err
		}
		r.ws()
		switch r.peek() {
		case ',':
			r.i++
		case '}':
			r.i++
			return nil
		default:
			return r.fail("expected ',' or '}'")
		}
	}
}

// value reads the value at r.i, a member or holding members (collect).
func (r *fieldsReader) value() error {
	switch r.peek() {
	case '{':
		start := r.i
		r.i++
		if r.ws(); r.peek() == '}' {
			r.i++
			r.add()
			return nil
		}
		r.i = start
		return r.object()
	case '[':
		start := r.i
		r.i++
		r.ws()
		empty := r.peek() == ']'
		r.i = start
		rule := Rule(r.names)
		if empty || rule.Kind == Atomic {
			r.add()
			return r.skipValue()
		}
		return r.list(rule)
	}
	r.add()
	return r.skipValue()
}

// list reads the items of a merging list (collectItem on each).
func (r *fieldsReader) list(rule ListRule) error {
	r.i++ // '['
	for {
		r.ws()
		var err error
		if rule.Kind == Set {
			err = r.setItem()
		} else {
			err = r.mapItem(rule.Key)
		}
		if err != nil {
			return err
		}
		r.ws()
		switch r.peek() {
		case ',':
			r.i++
		case ']':
			r.i++
			return nil
		default:
			return r.fail("expected ',' or ']'")
		}
	}
}

func (r *fieldsReader) setItem() error {
	start := r.i
	if err := r.skipValue(); err != nil {
		return err
	}
	raw := r.data[start:r.i]
	var e string
	if plainJSON(raw) {
		e = "v:" + string(raw)
	} else {
		v, err := Decode(raw)
		if err != nil {
			return r.fail(err.Error())
		}
		e = setElement(v)
	}
	r.push(e)
	r.add()
	r.pop()
	return nil
}

// mapItem reads an item of a list merged on key: the item's existence
// (its k: element and ".") and its fields. An item that is not an object
// has no members.
func (r *fieldsReader) mapItem(key string) error {
	if r.peek() != '{' {
		return r.skipValue()
	}
	raw, err := r.fieldValue(key)
	if err != nil {
		return err
	}
	var e string
	if raw == nil {
		e = keyElement(key, nil)
	} else if plainJSON(raw) && plainString([]byte(key)) {
		e = "k:{\"" + key + "\":" + string(raw) + "}"
	} else {
		v, err := Decode(raw)
		if err != nil {
			return r.fail(err.Error())
		}
		e = keyElement(key, v)
	}
	r.push(e)
	r.push(".")
	r.add()
	r.pop()
	err = r.object()
	r.pop()
	return err
}

// fieldValue returns the text of the value of the object at r.i's field
// name, nil when it has none, leaving r.i where it was.
func (r *fieldsReader) fieldValue(name string) ([]byte, error) {
	start := r.i
	defer func() { r.i = start }()
	r.i++ // '{'
	if r.ws(); r.peek() == '}' {
		return nil, nil
	}
	var found []byte
	for {
		r.ws()
		raw, err := r.str()
		if err != nil {
			return nil, err
		}
		if r.ws(); r.peek() != ':' {
			return nil, r.fail("expected ':'")
		}
		r.i++
		r.ws()
		vstart := r.i
		if err := r.skipValue(); err != nil {
			return nil, err
		}
		if k := raw[1 : len(raw)-1]; string(k) == name || slices.Contains(k, '\\') && unquotedIs(raw, name) {
			found = r.data[vstart:r.i]
		}
		r.ws()
		switch r.peek() {
		case ',':
			r.i++
		case '}':
			return found, nil
		default:
			return nil, r.fail("expected ',' or '}'")
		}
	}
}

func unquotedIs(raw []byte, name string) bool {
	var s string
	return json.Unmarshal(raw, &s) == nil && s == name
}

// str reads a string token, quotes included.
func (r *fieldsReader) str() ([]byte, error) {
	if r.peek() != '"' {
		return nil, r.fail("expected a string")
	}
	start := r.i
	r.i++
	for {
		j := bytes.IndexByte(r.data[r.i:], '"')
		if j < 0 {
			r.i = len(r.data)
			return nil, r.fail("unterminated string")
		}
		end := r.i + j
		r.i = end + 1
		// The quote ends the string unless an odd run of backslashes
		// escapes it.
		k := end
		for k > start && r.data[k-1] == '\\' {
			k--
		}
		if (end-k)%2 == 0 {
			return r.data[start:r.i], nil
		}
	}
}

// skipValue moves past the value at r.i.
func (r *fieldsReader) skipValue() error {
	switch c := r.peek(); c {
	case '"':
		_, err := r.str()
		return err
	case '{', '[':
		depth := 0
		for r.i < len(r.data) {
			switch r.data[r.i] {
			case '"':
				if _, err := r.str(); err != nil {
					return err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					r.i++
					return nil
				}
			}
			r.i++
		}
		return r.fail("unexpected end")
	default:
		start := r.i
		for r.i < len(r.data) && isLiteralByte(r.data[r.i]) {
			r.i++
		}
		if !validLiteral(r.data[start:r.i]) {
			r.i = start
			return r.fail("expected a value")
		}
		return nil
	}
}

func isLiteralByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'E'
}

// validLiteral accepts true, false, null and JSON numbers.
func validLiteral(b []byte) bool {
	switch string(b) {
	case "true", "false", "null":
		return true
	case "":
		return false
	}
	return json.Valid(b) && (b[0] == '-' || b[0] >= '0' && b[0] <= '9')
}

// plainJSON tells whether encoding/json writes the value of this text as
// the text itself: a literal, or a string of printable ASCII it escapes
// nothing in (an object's keys it sorts).
func plainJSON(raw []byte) bool {
	switch raw[0] {
	case '"':
		return plainString(raw[1 : len(raw)-1])
	case '{', '[':
		return false
	}
	return true
}

// plainString tells whether encoding/json quotes s as it is.
func plainString(s []byte) bool {
	for _, c := range s {
		if c < 0x20 || c >= utf8.RuneSelf || c == '\\' || c == '"' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// appendUnquoted appends the text of a JSON string token, as
// encoding/json decodes it.
func appendUnquoted(b, raw []byte) ([]byte, error) {
	if inner := raw[1 : len(raw)-1]; literalText(inner) {
		return append(b, inner...), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return b, err
	}
	return append(b, s...), nil
}
