package labels

import (
	"fmt"
	"strings"
)

// Parse reads a selector in Kubernetes' string syntax: comma-separated
// requirements, each one of
//
//	key=value  key==value  key!=value
//	key in (v1,v2)  key notin (v1,v2)
//	key  !key
//	key>1  key<1
//
// Whitespace around tokens is ignored. An empty string selects everything.
// Errors are *ParseError and wrap ErrInvalidSelector.
func Parse(selector string) (Selector, error) {
	p := &parser{lex: lexer{src: selector}}
	p.advance()
	if p.tok.kind == tEOF {
		return Everything(), nil
	}
	var reqs []Requirement
	for {
		r, err := p.requirement()
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, r)
		switch p.tok.kind {
		case tEOF:
			return NewSelector(reqs...), nil
		case tComma:
			p.advance()
			if p.tok.kind == tEOF {
				return nil, p.errorf("expected a requirement after ','")
			}
		default:
			return nil, p.errorf("expected ',' or end of selector after requirement %q, found %s", r.String(), p.tok)
		}
	}
}

type tokenKind int

const (
	tEOF      tokenKind = iota
	tIdent              // a key, a value, or the words in and notin
	tNot                // !
	tEq                 // =
	tDoubleEq           // ==
	tNotEq              // !=
	tOpen               // (
	tClose              // )
	tComma              // ,
	tGt                 // >
	tLt                 // <
)

type token struct {
	kind tokenKind
	text string
	pos  int
}

func (t token) String() string {
	if t.kind == tEOF {
		return "end of selector"
	}
	if t.kind == tIdent {
		return fmt.Sprintf("%q", t.text)
	}
	return "'" + t.text + "'"
}

type lexer struct {
	src string
	pos int
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isSpecial(c byte) bool { return strings.IndexByte("!=(),<>", c) >= 0 }

func (l *lexer) next() token {
	for l.pos < len(l.src) && isSpace(l.src[l.pos]) {
		l.pos++
	}
	start := l.pos
	if start == len(l.src) {
		return token{kind: tEOF, pos: start}
	}
	two := ""
	if start+2 <= len(l.src) {
		two = l.src[start : start+2]
	}
	switch two {
	case "==":
		l.pos += 2
		return token{kind: tDoubleEq, text: two, pos: start}
	case "!=":
		l.pos += 2
		return token{kind: tNotEq, text: two, pos: start}
	}
	c := l.src[start]
	if isSpecial(c) {
		l.pos++
		kind := map[byte]tokenKind{'!': tNot, '=': tEq, '(': tOpen, ')': tClose, ',': tComma, '>': tGt, '<': tLt}[c]
		return token{kind: kind, text: string(c), pos: start}
	}
	for l.pos < len(l.src) && !isSpace(l.src[l.pos]) && !isSpecial(l.src[l.pos]) {
		l.pos++
	}
	return token{kind: tIdent, text: l.src[start:l.pos], pos: start}
}

type parser struct {
	lex lexer
	tok token // the current, not yet consumed token
}

func (p *parser) advance() { p.tok = p.lex.next() }

func (p *parser) errorf(format string, args ...any) error {
	return p.errorAt(p.tok.pos, fmt.Sprintf(format, args...))
}

func (p *parser) errorAt(pos int, msg string) error {
	return &ParseError{Selector: p.lex.src, Position: pos, Message: msg}
}

func (p *parser) requirement() (Requirement, error) {
	start := p.tok.pos
	if p.tok.kind == tNot {
		p.advance()
		if p.tok.kind != tIdent {
			return Requirement{}, p.errorf("expected a label key after '!', found %s", p.tok)
		}
		key := p.tok.text
		p.advance()
		return p.build(start, key, DoesNotExist, nil)
	}
	if p.tok.kind != tIdent {
		return Requirement{}, p.errorf("expected a label key or '!', found %s", p.tok)
	}
	key := p.tok.text
	p.advance()

	switch p.tok.kind {
	case tEOF, tComma:
		return p.build(start, key, Exists, nil)
	case tEq, tDoubleEq, tNotEq:
		op := Equals
		if p.tok.kind == tNotEq {
			op = NotEquals
		}
		opTok := p.tok
		p.advance()
		value, err := p.optionalValue(opTok)
		if err != nil {
			return Requirement{}, err
		}
		return p.build(start, key, op, []string{value})
	case tGt, tLt:
		op := GreaterThan
		if p.tok.kind == tLt {
			op = LessThan
		}
		opTok := p.tok
		p.advance()
		if p.tok.kind != tIdent {
			return Requirement{}, p.errorf("expected an integer after %s, found %s", opTok, p.tok)
		}
		value := p.tok.text
		p.advance()
		return p.build(start, key, op, []string{value})
	case tIdent:
		if p.tok.text == "in" || p.tok.text == "notin" {
			op := In
			if p.tok.text == "notin" {
				op = NotIn
			}
			p.advance()
			values, err := p.valueSet(op)
			if err != nil {
				return Requirement{}, err
			}
			return p.build(start, key, op, values)
		}
	}
	return Requirement{}, p.errorf("expected an operator (=, ==, !=, in, notin, >, <), ',' or end of selector after key %q, found %s", key, p.tok)
}

// optionalValue reads the value after = or !=; "a=" means the empty value.
func (p *parser) optionalValue(op token) (string, error) {
	switch p.tok.kind {
	case tIdent:
		v := p.tok.text
		p.advance()
		return v, nil
	case tComma, tEOF:
		return "", nil
	}
	return "", p.errorf("expected a value after %s, found %s", op, p.tok)
}

// valueSet reads "(v1, v2, ...)"; a value between commas may be empty.
func (p *parser) valueSet(op Operator) ([]string, error) {
	if p.tok.kind != tOpen {
		return nil, p.errorf("expected '(' after %q, found %s", op, p.tok)
	}
	p.advance()
	if p.tok.kind == tClose {
		return nil, p.errorf("expected at least one value in the %q list", op)
	}
	var values []string
	for {
		switch p.tok.kind {
		case tIdent:
			values = append(values, p.tok.text)
			p.advance()
		case tComma, tClose:
			values = append(values, "")
		default:
			return nil, p.errorf("expected a value, ',' or ')' in the %q list, found %s", op, p.tok)
		}
		switch p.tok.kind {
		case tComma:
			p.advance()
		case tClose:
			p.advance()
			return values, nil
		default:
			return nil, p.errorf("expected ',' or ')' in the %q list, found %s", op, p.tok)
		}
	}
}

func (p *parser) build(start int, key string, op Operator, values []string) (Requirement, error) {
	r, err := NewRequirement(key, op, values)
	if err != nil {
		return Requirement{}, p.errorAt(start, err.Error())
	}
	return r, nil
}
