package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// parseKubeconfigYAML reads the YAML that kubeconfigs are written in —
// block maps, block sequences (indented or not under their key), and plain,
// single- or double-quoted scalars, with comments — or JSON. Anchors, flow
// collections other than {} and [], and multi-line scalars are not
// kubeconfig's and are refused rather than misread.
func parseKubeconfigYAML(data []byte) (map[string]any, error) {
	if t := strings.TrimSpace(string(data)); strings.HasPrefix(t, "{") {
		var m map[string]any
		err := json.Unmarshal(data, &m)
		return m, err
	}
	var lines []yamlLine
	for i, raw := range strings.Split(string(data), "\n") {
		raw = strings.TrimRight(raw, " \t\r")
		text := strings.TrimLeft(raw, " ")
		if text == "" || text[0] == '#' || text == "---" {
			continue
		}
		lines = append(lines, yamlLine{no: i + 1, indent: len(raw) - len(text), text: text})
	}
	p := &yamlParser{lines: lines}
	if len(lines) == 0 {
		return map[string]any{}, nil
	}
	v, err := p.block(lines[0].indent)
	if err != nil {
		return nil, err
	}
	if p.i < len(lines) {
		return nil, p.errorf("unexpected indentation")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("kubeconfig is not a YAML map")
	}
	return m, nil
}

type yamlLine struct {
	no, indent int
	text       string
}

type yamlParser struct {
	lines []yamlLine
	i     int
}

func (p *yamlParser) errorf(format string, args ...any) error {
	no := 0
	if p.i < len(p.lines) {
		no = p.lines[p.i].no
	}
	return fmt.Errorf("yaml line %d: "+format, append([]any{no}, args...)...)
}

// block parses the map or sequence whose lines start at indent.
func (p *yamlParser) block(indent int) (any, error) {
	if isSeqItem(p.lines[p.i].text) {
		return p.seq(indent)
	}
	return p.mapping(indent)
}

func isSeqItem(text string) bool { return text == "-" || strings.HasPrefix(text, "- ") }

func (p *yamlParser) mapping(indent int) (map[string]any, error) {
	m := map[string]any{}
	for p.i < len(p.lines) && p.lines[p.i].indent == indent && !isSeqItem(p.lines[p.i].text) {
		key, rest, ok := splitKey(p.lines[p.i].text)
		if !ok {
			return nil, p.errorf("want key: value")
		}
		p.i++
		if rest != "" {
			v, err := scalar(rest)
			if err != nil {
				return nil, p.errorf("%v", err)
			}
			m[key] = v
			continue
		}
		// A nested block: deeper, or a sequence at the key's own indent.
		if p.i < len(p.lines) && (p.lines[p.i].indent > indent || (p.lines[p.i].indent == indent && isSeqItem(p.lines[p.i].text))) {
			v, err := p.block(p.lines[p.i].indent)
			if err != nil {
				return nil, err
			}
			m[key] = v
			continue
		}
		m[key] = nil
	}
	if p.i < len(p.lines) && p.lines[p.i].indent > indent {
		return nil, p.errorf("unexpected indentation")
	}
	return m, nil
}

func (p *yamlParser) seq(indent int) ([]any, error) {
	var out []any
	for p.i < len(p.lines) && p.lines[p.i].indent == indent && isSeqItem(p.lines[p.i].text) {
		ln := p.lines[p.i]
		content := strings.TrimLeft(strings.TrimPrefix(ln.text, "-"), " ")
		if content == "" {
			p.i++
			if p.i < len(p.lines) && p.lines[p.i].indent > indent {
				v, err := p.block(p.lines[p.i].indent)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			} else {
				out = append(out, nil)
			}
			continue
		}
		if _, _, isMap := splitKey(content); isMap || isSeqItem(content) {
			// "- key: value" opens a map (or "- - x" a sequence) whose
			// lines continue at the column of its first key.
			p.lines[p.i] = yamlLine{no: ln.no, indent: ln.indent + len(ln.text) - len(content), text: content}
			v, err := p.block(p.lines[p.i].indent)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			continue
		}
		v, err := scalar(content)
		if err != nil {
			return nil, p.errorf("%v", err)
		}
		out = append(out, v)
		p.i++
	}
	return out, nil
}

// splitKey splits "key: rest" (rest may be empty after "key:").
func splitKey(text string) (key, rest string, ok bool) {
	if text[0] == '"' || text[0] == '\'' {
		end := closingQuote(text)
		if end < 0 || end+1 >= len(text) || text[end+1] != ':' {
			return "", "", false
		}
		k, err := scalar(text[:end+1])
		if err != nil {
			return "", "", false
		}
		return fmt.Sprint(k), strings.TrimSpace(text[end+2:]), true
	}
	i := strings.Index(text, ": ")
	if i < 0 {
		if strings.HasSuffix(text, ":") {
			return text[:len(text)-1], "", true
		}
		return "", "", false
	}
	return text[:i], strings.TrimSpace(text[i+2:]), true
}

// closingQuote is the index of the quote that closes text's opening quote.
func closingQuote(text string) int {
	q := text[0]
	for i := 1; i < len(text); i++ {
		switch {
		case q == '"' && text[i] == '\\':
			i++
		case text[i] == q && q == '\'' && i+1 < len(text) && text[i+1] == '\'':
			i++
		case text[i] == q:
			return i
		}
	}
	return -1
}

// scalar reads one scalar value. Plain scalars stay strings except true,
// false and null, which the kubeconfig fields read here treat as such.
func scalar(s string) (any, error) {
	switch {
	case s[0] == '"':
		end := closingQuote(s)
		if end < 0 || !onlyComment(s[end+1:]) {
			return nil, fmt.Errorf("bad double-quoted scalar %s", s)
		}
		return strconv.Unquote(s[:end+1])
	case s[0] == '\'':
		end := closingQuote(s)
		if end < 0 || !onlyComment(s[end+1:]) {
			return nil, fmt.Errorf("bad single-quoted scalar %s", s)
		}
		return strings.ReplaceAll(s[1:end], "''", "'"), nil
	}
	if i := strings.Index(s, " #"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	switch s {
	case "{}":
		return map[string]any{}, nil
	case "[]":
		return []any{}, nil
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "null", "~":
		return nil, nil
	}
	if strings.ContainsAny(s[:1], "&*!|>{[") {
		return nil, fmt.Errorf("unsupported YAML %q", s)
	}
	return s, nil
}

func onlyComment(rest string) bool {
	rest = strings.TrimSpace(rest)
	return rest == "" || rest[0] == '#'
}
