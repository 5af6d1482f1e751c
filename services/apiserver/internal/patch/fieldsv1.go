package patch

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The fieldsV1 text of every managedFields entry is read and written on
// every write of an object, so it has its own small codec instead of going
// through map[string]any and encoding/json.

// MarshalFieldsV1 writes the set as Kubernetes' fieldsV1 JSON: the tree of
// the members' paths, each level an object with sorted keys and a leaf an
// empty object.
func (s FieldSet) MarshalFieldsV1() string {
	paths := make([][]string, 0, len(s))
	for _, p := range s {
		paths = append(paths, p)
	}
	slices.SortFunc(paths, slices.Compare)
	return writeFieldsV1(paths)
}

// writeFieldsV1 writes the fieldsV1 tree of paths sorted element by
// element: that order is the tree's, depth first with sorted keys, so it is
// written without being built. A repeated path writes nothing more.
func writeFieldsV1(paths [][]string) string {
	size := 2
	for _, p := range paths {
		for _, e := range p {
			size += len(e) + 6
		}
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteByte('{')
	var prev []string
	for _, p := range paths {
		c := 0
		for c < len(prev) && c < len(p) && prev[c] == p[c] {
			c++
		}
		for range len(prev) - c {
			b.WriteByte('}')
		}
		for d := c; d < len(p); d++ {
			if d == c && c < len(prev) {
				b.WriteByte(',')
			}
			writeJSONString(&b, p[d])
			b.WriteString(":{")
		}
		prev = p
	}
	for range len(prev) {
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.String()
}

// writeJSONString quotes s as a JSON string.
func writeJSONString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

var errFieldsV1 = errors.New("fieldsV1")

// ParseFieldsV1 reads fieldsV1 JSON: nested objects whose leaves (empty
// objects) and "." keys are the members.
func ParseFieldsV1(text string) (FieldSet, error) {
	s := FieldSet{}
	p := fieldsParser{text: text}
	p.ws()
	if p.i == len(p.text) {
		return s, nil
	}
	if err := p.object(s, nil); err != nil {
		return nil, err
	}
	if p.ws(); p.i != len(p.text) {
		return nil, p.fail("unexpected data after the object")
	}
	return s, nil
}

type fieldsParser struct {
	text string
	i    int
}

func (p *fieldsParser) fail(msg string) error {
	return fmt.Errorf("%w: %s at offset %d", errFieldsV1, msg, p.i)
}

func (p *fieldsParser) ws() {
	for p.i < len(p.text) && strings.IndexByte(" \t\r\n", p.text[p.i]) >= 0 {
		p.i++
	}
}

// object reads an object at path; an empty one is a member.
func (p *fieldsParser) object(s FieldSet, path []string) error {
	if p.i >= len(p.text) || p.text[p.i] != '{' {
		return p.fail("expected an object")
	}
	p.i++
	p.ws()
	if p.i < len(p.text) && p.text[p.i] == '}' {
		p.i++
		if len(path) > 0 {
			s.add(path)
		}
		return nil
	}
	for {
		p.ws()
		key, err := p.str()
		if err != nil {
			return err
		}
		p.ws()
		if p.i >= len(p.text) || p.text[p.i] != ':' {
			return p.fail("expected ':'")
		}
		p.i++
		p.ws()
		child := appendPath(path, key)
		if key == "." {
			s.add(child)
		}
		if err := p.object(s, child); err != nil {
			return err
		}
		p.ws()
		if p.i >= len(p.text) {
			return p.fail("unexpected end")
		}
		switch p.text[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return nil
		default:
			return p.fail("expected ',' or '}'")
		}
	}
}

// str reads a JSON string.
func (p *fieldsParser) str() (string, error) {
	if p.i >= len(p.text) || p.text[p.i] != '"' {
		return "", p.fail("expected a string")
	}
	start := p.i
	escaped := false
	for p.i++; p.i < len(p.text); p.i++ {
		switch c := p.text[p.i]; {
		case c == '\\':
			escaped = true
			p.i++
		case c == '"':
			p.i++
			raw := p.text[start:p.i]
			if !escaped {
				return raw[1 : len(raw)-1], nil
			}
			// JSON escapes are Go's but for \/, which only JSON has.
			v, err := strconv.Unquote(strings.ReplaceAll(raw, `\/`, "/"))
			if err != nil || !utf8.ValidString(v) {
				return "", p.fail("bad string")
			}
			return v, nil
		}
	}
	return "", p.fail("unterminated string")
}
