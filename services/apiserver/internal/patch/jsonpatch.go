package patch

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Operation is one RFC 6902 operation.
type Operation struct {
	Op, Path, From string
	Value          any
	has            bool
}

// ParseJSONPatch reads an RFC 6902 document: an array of operations.
func ParseJSONPatch(data []byte) ([]Operation, error) {
	v, err := Decode(data)
	if err != nil {
		return nil, badPatch(err.Error())
	}
	list, ok := v.([]any)
	if !ok {
		return nil, badPatch(fmt.Sprintf("json: cannot unmarshal %s into Go value of type jsonpatch.Patch", typeName(v)))
	}
	ops := make([]Operation, 0, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, badPatch(fmt.Sprintf("operation %d is not an object", i))
		}
		var op Operation
		op.Op, _ = m["op"].(string)
		op.Path, _ = m["path"].(string)
		op.From, _ = m["from"].(string)
		op.Value, op.has = m["value"]
		if _, ok := m["path"].(string); !ok {
			return nil, badPatch(fmt.Sprintf("operation %d: missing path", i))
		}
		switch op.Op {
		case "add", "replace", "test":
			if !op.has {
				return nil, badPatch(fmt.Sprintf("operation %d (%s): missing value", i, op.Op))
			}
		case "move", "copy":
			if _, ok := m["from"].(string); !ok {
				return nil, badPatch(fmt.Sprintf("operation %d (%s): missing from", i, op.Op))
			}
		case "remove":
		default:
			return nil, badPatch(fmt.Sprintf("unexpected kind: %s", strconv.Quote(op.Op)))
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// JSONPatch applies RFC 6902 operations in order to a copy of doc; the
// first one that fails fails the whole patch.
func JSONPatch(doc any, ops []Operation) (any, error) {
	doc = deepCopy(doc)
	var err error
	for _, op := range ops {
		switch op.Op {
		case "add":
			doc, err = add(doc, op.Path, deepCopy(op.Value))
		case "remove":
			doc, _, err = remove(doc, op.Path)
		case "replace":
			if _, err = get(doc, op.Path); err == nil {
				doc, _, err = remove(doc, op.Path)
				if err == nil {
					doc, err = add(doc, op.Path, deepCopy(op.Value))
				}
			}
		case "move":
			if op.Path == op.From {
				continue
			}
			if strings.HasPrefix(op.Path, op.From+"/") {
				return nil, cannotApply(fmt.Sprintf("move from %s to a location inside it (%s)", op.From, op.Path))
			}
			var v any
			if doc, v, err = remove(doc, op.From); err == nil {
				doc, err = add(doc, op.Path, v)
			}
		case "copy":
			var v any
			if v, err = get(doc, op.From); err == nil {
				doc, err = add(doc, op.Path, deepCopy(v))
			}
		case "test":
			var v any
			if v, err = get(doc, op.Path); err == nil && !Equal(v, op.Value) {
				got, _ := json.Marshal(v)
				err = cannotApply(fmt.Sprintf("testing value %s failed: test failed (found %s)", op.Path, got))
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return doc, nil
}

// pointer splits a JSON pointer (RFC 6901) into unescaped tokens.
func pointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, badPatch(fmt.Sprintf("JSON pointer %q must start with /", p))
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts, nil
}

func index(tok string, n int, appendOK bool) (int, error) {
	if tok == "-" && appendOK {
		return n, nil
	}
	i, err := strconv.Atoi(tok)
	if err != nil || i < 0 || (tok != "0" && strings.HasPrefix(tok, "0")) {
		return 0, cannotApply(fmt.Sprintf("invalid array index %q", tok))
	}
	limit := n - 1
	if appendOK {
		limit = n
	}
	if i > limit {
		return 0, cannotApply(fmt.Sprintf("array index %d out of bounds (length %d)", i, n))
	}
	return i, nil
}

func get(doc any, path string) (any, error) {
	toks, err := pointer(path)
	if err != nil {
		return nil, err
	}
	cur := doc
	for _, t := range toks {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[t]
			if !ok {
				return nil, cannotApply(fmt.Sprintf("path %s does not exist: no member %q", path, t))
			}
			cur = v
		case []any:
			i, err := index(t, len(c), false)
			if err != nil {
				return nil, err
			}
			cur = c[i]
		default:
			return nil, cannotApply(fmt.Sprintf("path %s does not exist: %s has no members", path, typeName(cur)))
		}
	}
	return cur, nil
}

// edit changes the container at path's parent with fn and writes the
// changed container back up the chain (lists change length in place of
// their parent slot).
func edit(doc any, path string, fn func(parent any, last string) (any, error)) (any, error) {
	toks, err := pointer(path)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return fn(nil, "")
	}
	var walk func(node any, toks []string) (any, error)
	walk = func(node any, toks []string) (any, error) {
		if len(toks) == 1 {
			return fn(node, toks[0])
		}
		switch c := node.(type) {
		case map[string]any:
			child, ok := c[toks[0]]
			if !ok {
				return nil, cannotApply(fmt.Sprintf("path %s does not exist: no member %q", path, toks[0]))
			}
			nc, err := walk(child, toks[1:])
			if err != nil {
				return nil, err
			}
			c[toks[0]] = nc
			return c, nil
		case []any:
			i, err := index(toks[0], len(c), false)
			if err != nil {
				return nil, err
			}
			nc, err := walk(c[i], toks[1:])
			if err != nil {
				return nil, err
			}
			c[i] = nc
			return c, nil
		}
		return nil, cannotApply(fmt.Sprintf("path %s does not exist: %s has no members", path, typeName(node)))
	}
	return walk(doc, toks)
}

func add(doc any, path string, v any) (any, error) {
	return edit(doc, path, func(parent any, last string) (any, error) {
		if path == "" {
			return v, nil
		}
		switch c := parent.(type) {
		case map[string]any:
			c[last] = v
			return c, nil
		case []any:
			i, err := index(last, len(c), true)
			if err != nil {
				return nil, err
			}
			c = append(c, nil)
			copy(c[i+1:], c[i:])
			c[i] = v
			return c, nil
		}
		return nil, cannotApply(fmt.Sprintf("cannot add %s: the parent is a %s", path, typeName(parent)))
	})
}

func remove(doc any, path string) (any, any, error) {
	var removed any
	out, err := edit(doc, path, func(parent any, last string) (any, error) {
		switch c := parent.(type) {
		case map[string]any:
			v, ok := c[last]
			if !ok {
				return nil, cannotApply(fmt.Sprintf("unable to remove nonexistent key: %s: missing value", last))
			}
			removed = v
			delete(c, last)
			return c, nil
		case []any:
			i, err := index(last, len(c), false)
			if err != nil {
				return nil, err
			}
			removed = c[i]
			return append(c[:i:i], c[i+1:]...), nil
		}
		return nil, cannotApply(fmt.Sprintf("cannot remove %s", path))
	})
	return out, removed, err
}
