package k8sproto

import (
	"bufio"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
)

//go:embed fields.txt
var fieldsTxt string

// kind is how a field's value is read from the wire and written as JSON.
type kind int

const (
	kString kind = iota
	kBool
	kInt32
	kInt64
	kBytes
	kMessage
	kTime
	kMicroTime
	kQuantity
	kIntOrString
	kRawJSON
)

var kindNames = map[string]kind{
	"string": kString, "bool": kBool, "int32": kInt32, "int64": kInt64, "bytes": kBytes,
	"time": kTime, "microtime": kMicroTime, "quantity": kQuantity,
	"intorstring": kIntOrString, "rawjson": kRawJSON,
}

// valueType is the type of a single value: a scalar, a special form, or a message.
type valueType struct {
	kind kind
	msg  *message // for kMessage
}

// fieldDesc is one field of a Kubernetes message.
type fieldDesc struct {
	num      int32
	json     string
	elem     valueType
	repeated bool
	isMap    bool
	key      valueType // for maps
	inline   bool
	keepZero bool
}

// message is one Kubernetes message: its name ("core.v1.PodSpec") and fields by number.
type message struct {
	name   string
	fields map[int32]*fieldDesc
}

// table holds every message and which message each apiVersion/kind names.
type table struct {
	messages map[string]*message
	kinds    map[[2]string]*message
}

var fields = mustParse(fieldsTxt)

func mustParse(text string) *table {
	t, err := parse(text)
	if err != nil {
		panic("k8sproto: fields.txt: " + err.Error())
	}
	return t
}

// parse reads the table's text form (described at the top of fields.txt).
func parse(text string) (*table, error) {
	t := &table{messages: map[string]*message{}, kinds: map[[2]string]*message{}}
	msg := func(name string) *message {
		m := t.messages[name]
		if m == nil {
			m = &message{name: name, fields: map[int32]*fieldDesc{}}
			t.messages[name] = m
		}
		return m
	}
	defined := map[string]bool{}
	var cur *message
	sc := bufio.NewScanner(strings.NewReader(text))
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 0 || strings.HasPrefix(f[0], "#"):
		case f[0] == "kind" && len(f) == 4:
			t.kinds[[2]string{f[1], f[2]}] = msg(f[3])
		case f[0] == "message" && len(f) == 2:
			cur = msg(f[1])
			defined[f[1]] = true
		case len(f) == 3 && cur != nil:
			fd, err := parseField(f, msg)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			if cur.fields[fd.num] != nil {
				return nil, fmt.Errorf("line %d: %s has field %d twice", line, cur.name, fd.num)
			}
			cur.fields[fd.num] = fd
		default:
			return nil, fmt.Errorf("line %d: cannot read %q", line, sc.Text())
		}
	}
	for name := range t.messages {
		if !defined[name] {
			return nil, fmt.Errorf("message %s is used but not defined", name)
		}
	}
	return t, nil
}

func parseField(f []string, msg func(string) *message) (*fieldDesc, error) {
	n, err := strconv.ParseInt(f[0], 10, 32)
	if err != nil || n <= 0 {
		return nil, fmt.Errorf("bad field number %q", f[0])
	}
	fd := &fieldDesc{num: int32(n), json: f[1]}
	if name, ok := strings.CutPrefix(fd.json, "..."); ok {
		fd.json, fd.inline = name, true
	}
	typ := f[2]
	if rest, ok := strings.CutPrefix(typ, "[]"); ok {
		fd.repeated, typ = true, rest
	} else if rest, ok := strings.CutPrefix(typ, "map["); ok {
		k, v, found := strings.Cut(rest, "]")
		if !found {
			return nil, fmt.Errorf("bad map type %q", f[2])
		}
		fd.isMap, typ = true, v
		if fd.key, err = parseType(k, msg); err != nil {
			return nil, err
		}
	} else if rest, ok := strings.CutPrefix(typ, "*"); ok {
		fd.keepZero, typ = true, rest
	}
	if fd.elem, err = parseType(typ, msg); err != nil {
		return nil, err
	}
	if fd.isMap && (fd.elem.kind == kMessage || fd.key.kind != kString) {
		return nil, fmt.Errorf("map %s: only string keys and non-message values are read", fd.json)
	}
	if fd.inline && (fd.elem.kind != kMessage || fd.repeated || fd.isMap) {
		return nil, fmt.Errorf("inlined field %s is not a single message", fd.json)
	}
	return fd, nil
}

func parseType(s string, msg func(string) *message) (valueType, error) {
	if k, ok := kindNames[s]; ok {
		return valueType{kind: k}, nil
	}
	if !strings.Contains(s, ".") {
		return valueType{}, fmt.Errorf("unknown type %q", s)
	}
	return valueType{kind: kMessage, msg: msg(s)}, nil
}
