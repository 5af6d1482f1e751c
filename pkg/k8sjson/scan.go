package k8sjson

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The scanner: the token-level half of the decoder. It reads JSON from
// d.data at d.pos and reports syntax errors with encoding/json's wording.

// maxDepth bounds nesting, as encoding/json does.
const maxDepth = 10000

// String token flags.
const (
	strEscaped = 1 << iota // has a backslash escape
	strHigh                // has a byte >= 0x80
)

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (d *decoder) skipWS() {
	for d.pos < len(d.data) && isSpace(d.data[d.pos]) {
		d.pos++
	}
}

// syntaxError reports the byte at d.pos as unexpected in context
// ("looking for beginning of value"), or the end of input.
func (d *decoder) syntaxError(context string) error {
	if d.pos >= len(d.data) {
		return d.eof()
	}
	return &FieldError{
		Path:    d.path(""),
		Reason:  ReasonMalformed,
		Message: "invalid character " + quoteChar(d.data[d.pos]) + " " + context,
		Offset:  int64(d.pos) + 1,
	}
}

func (d *decoder) eof() error {
	return &FieldError{
		Path:    d.path(""),
		Reason:  ReasonMalformed,
		Message: "unexpected end of JSON input",
		Offset:  int64(len(d.data)),
	}
}

func (d *decoder) tooDeep() error {
	return &FieldError{Path: d.path(""), Reason: ReasonMalformed, Message: "exceeded max depth", Offset: int64(d.pos) + 1}
}

// quoteChar formats c as encoding/json's syntax errors do.
func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

// stringToken reads the string at d.pos (its opening quote) and returns
// its raw contents between the quotes and strEscaped/strHigh flags.
func (d *decoder) stringToken() ([]byte, int, error) {
	data := d.data
	start := d.pos + 1
	flags := 0
	i := start
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return data[start:i], flags, nil
		case c == '\\':
			flags |= strEscaped
			i++
			if i >= len(data) {
				d.pos = i
				return nil, 0, d.eof()
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				i++
				for range 4 {
					if i >= len(data) {
						d.pos = i
						return nil, 0, d.eof()
					}
					if !isHex(data[i]) {
						d.pos = i
						return nil, 0, d.syntaxError(`in \u hexadecimal character escape`)
					}
					i++
				}
			default:
				d.pos = i
				return nil, 0, d.syntaxError("in string escape code")
			}
		case c < ' ':
			d.pos = i
			return nil, 0, d.syntaxError("in string literal")
		default:
			if c >= utf8.RuneSelf {
				flags |= strHigh
			}
			i++
		}
	}
	d.pos = i
	return nil, 0, d.eof()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// stringValue reads a string token and returns its value.
func (d *decoder) stringValue() (string, error) {
	raw, flags, err := d.stringToken()
	if err != nil {
		return "", err
	}
	return d.makeString(raw, flags), nil
}

// makeString converts a raw string token to its value.
func (d *decoder) makeString(raw []byte, flags int) string {
	if flags == 0 || flags == strHigh && utf8.Valid(raw) {
		return string(raw)
	}
	d.scratch = unescape(d.scratch[:0], raw)
	return string(d.scratch)
}

// unescape appends the value of a validated raw string token to b,
// replacing invalid UTF-8 and unpaired surrogates with U+FFFD, as
// encoding/json does.
func unescape(b, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			e := s[i+1]
			i += 2
			switch e {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r := hex4(s[i:])
				i += 4
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						r2 = hex4(s[i+2:])
					}
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						i += 6
						r = dec
					} else {
						r = utf8.RuneError
					}
				}
				b = utf8.AppendRune(b, r)
			default: // " \ /
				b = append(b, e)
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			b = utf8.AppendRune(b, r) // RuneError for invalid bytes
			i += size
		}
	}
	return b
}

func hex4(s []byte) rune {
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// numberToken reads the number at d.pos and returns its literal text.
func (d *decoder) numberToken() ([]byte, error) {
	data := d.data
	start := d.pos
	i := start
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		d.pos = i
		return nil, d.eof()
	case data[i] == '0':
		i++
	case '1' <= data[i] && data[i] <= '9':
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	default:
		d.pos = i
		return nil, d.syntaxError("in numeric literal")
	}
	if i < len(data) && data[i] == '.' {
		i++
		if i >= len(data) {
			d.pos = i
			return nil, d.eof()
		}
		if !isDigit(data[i]) {
			d.pos = i
			return nil, d.syntaxError("after decimal point in numeric literal")
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) {
			d.pos = i
			return nil, d.eof()
		}
		if !isDigit(data[i]) {
			d.pos = i
			return nil, d.syntaxError("in exponent of numeric literal")
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	d.pos = i
	return data[start:i], nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// literal reads the word (true, false or null) at d.pos.
func (d *decoder) literal(word string) error {
	for i := range len(word) {
		if d.pos >= len(d.data) {
			return d.eof()
		}
		if d.data[d.pos] != word[i] {
			if i == 0 {
				return d.syntaxError("looking for beginning of value")
			}
			return d.syntaxError("in literal " + word + " (expecting " + quoteChar(word[i]) + ")")
		}
		d.pos++
	}
	return nil
}

// skipValue reads and checks one value of any shape, without recursion.
func (d *decoder) skipValue() error {
	base := len(d.skip)
	defer func() { d.skip = d.skip[:base] }()
	for {
		// A value starts at d.pos (after whitespace).
		d.skipWS()
		if d.pos >= len(d.data) {
			return d.eof()
		}
		opened := false
		switch c := d.data[d.pos]; c {
		case '{', '[':
			if d.depth+len(d.skip)-base >= maxDepth {
				return d.tooDeep()
			}
			d.pos++
			d.skipWS()
			if d.pos < len(d.data) && d.data[d.pos] == c+2 { // '}' or ']'
				d.pos++
				break
			}
			d.skip = append(d.skip, c)
			if c == '{' {
				if err := d.skipKey(); err != nil {
					return err
				}
			}
			opened = true
		case '"':
			if _, _, err := d.stringToken(); err != nil {
				return err
			}
		case 't':
			if err := d.literal("true"); err != nil {
				return err
			}
		case 'f':
			if err := d.literal("false"); err != nil {
				return err
			}
		case 'n':
			if err := d.literal("null"); err != nil {
				return err
			}
		default:
			if c != '-' && !isDigit(c) {
				return d.syntaxError("looking for beginning of value")
			}
			if _, err := d.numberToken(); err != nil {
				return err
			}
		}
		if opened {
			continue
		}
		// A value ended: close containers until one has a next element.
		for {
			if len(d.skip) == base {
				return nil
			}
			d.skipWS()
			if d.pos >= len(d.data) {
				return d.eof()
			}
			top := d.skip[len(d.skip)-1]
			c := d.data[d.pos]
			if c == ',' {
				d.pos++
				if top == '{' {
					d.skipWS()
					if err := d.skipKey(); err != nil {
						return err
					}
				}
				break
			}
			if c == top+2 {
				d.pos++
				d.skip = d.skip[:len(d.skip)-1]
				continue
			}
			if top == '{' {
				return d.syntaxError("after object key:value pair")
			}
			return d.syntaxError("after array element")
		}
	}
}

// skipKey reads an object key and its colon.
func (d *decoder) skipKey() error {
	if d.pos >= len(d.data) {
		return d.eof()
	}
	if d.data[d.pos] != '"' {
		return d.syntaxError("looking for beginning of object key string")
	}
	if _, _, err := d.stringToken(); err != nil {
		return err
	}
	return d.colon()
}

// colon reads the colon after an object key.
func (d *decoder) colon() error {
	d.skipWS()
	if d.pos >= len(d.data) {
		return d.eof()
	}
	if d.data[d.pos] != ':' {
		return d.syntaxError("after object key")
	}
	d.pos++
	d.skipWS()
	return nil
}

// appendCompact checks that src is one JSON value (with optional
// surrounding space) and appends it to dst compact, its strings re-encoded
// as Marshal writes them.
func appendCompact(dst, src []byte) ([]byte, error) {
	d := decoder{data: src}
	d.skipWS()
	start := d.pos
	if err := d.skipValue(); err != nil {
		return dst, err
	}
	end := d.pos
	d.skipWS()
	if d.pos < len(src) {
		return dst, d.syntaxError("after top-level value")
	}
	d.pos = start
	for d.pos < end {
		c := src[d.pos]
		switch {
		case isSpace(c):
			d.pos++
		case c == '"':
			raw, flags, _ := d.stringToken()
			if flags == 0 {
				dst = append(dst, src[d.pos-len(raw)-2:d.pos]...)
			} else {
				d.scratch = unescape(d.scratch[:0], raw)
				dst = appendString(dst, string(d.scratch))
			}
		default:
			dst = append(dst, c)
			d.pos++
		}
	}
	return dst, nil
}
