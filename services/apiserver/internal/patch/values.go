package patch

import (
	"encoding/json"
	"unicode/utf8"
)

// DecodeObjectText reads a JSON object into the values DecodeObject
// gives, without encoding/json's reflection: it is for text the server
// wrote itself (k8sjson.Marshal of a stored object), decoded on every
// update to diff its fields. Its errors do not word what is wrong as
// encoding/json's do, so a client's text goes to DecodeObject.
func DecodeObjectText(data []byte) (map[string]any, error) {
	r := fieldsReader{data: data}
	r.ws()
	if r.peek() != '{' {
		return nil, r.fail("expected a JSON object")
	}
	m, err := r.objectValue()
	if err != nil {
		return nil, err
	}
	if r.ws(); r.i != len(r.data) {
		return nil, r.fail("unexpected data after the JSON value")
	}
	return m, nil
}

func (r *fieldsReader) objectValue() (map[string]any, error) {
	r.i++ // '{'
	m := map[string]any{}
	if r.ws(); r.peek() == '}' {
		r.i++
		return m, nil
	}
	for {
		r.ws()
		raw, err := r.str()
		if err != nil {
			return nil, err
		}
		key, err := unquote(raw)
		if err != nil {
			return nil, r.fail(err.Error())
		}
		if r.ws(); r.peek() != ':' {
			return nil, r.fail("expected ':'")
		}
		r.i++
		r.ws()
		v, err := r.anyValue()
		if err != nil {
			return nil, err
		}
		m[key] = v
		r.ws()
		switch r.peek() {
		case ',':
			r.i++
		case '}':
			r.i++
			return m, nil
		default:
			return nil, r.fail("expected ',' or '}'")
		}
	}
}

func (r *fieldsReader) anyValue() (any, error) {
	switch r.peek() {
	case '{':
		return r.objectValue()
	case '[':
		r.i++
		l := []any{}
		if r.ws(); r.peek() == ']' {
			r.i++
			return l, nil
		}
		for {
			r.ws()
			v, err := r.anyValue()
			if err != nil {
				return nil, err
			}
			l = append(l, v)
			r.ws()
			switch r.peek() {
			case ',':
				r.i++
			case ']':
				r.i++
				return l, nil
			default:
				return nil, r.fail("expected ',' or ']'")
			}
		}
	case '"':
		raw, err := r.str()
		if err != nil {
			return nil, err
		}
		s, err := unquote(raw)
		if err != nil {
			return nil, r.fail(err.Error())
		}
		return s, nil
	}
	start := r.i
	if err := r.skipValue(); err != nil {
		return nil, err
	}
	switch lit := r.data[start:r.i]; lit[0] {
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case 'n':
		return nil, nil
	default:
		return json.Number(lit), nil
	}
}

// unquote returns the text of a JSON string token, as encoding/json
// decodes it.
func unquote(raw []byte) (string, error) {
	if inner := raw[1 : len(raw)-1]; literalText(inner) {
		return string(inner), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// literalText tells whether the inside of a string token is its text: no
// escapes, no control characters, valid UTF-8.
func literalText(inner []byte) bool {
	for _, c := range inner {
		if c < 0x20 || c == '\\' {
			return false
		}
	}
	return utf8.Valid(inner)
}
