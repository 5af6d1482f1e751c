package patch

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// FieldSet is a set of field paths in fieldsV1 terms. A path is a list of
// elements: "f:<name>" a field, "k:<json object>" a list item by its merge
// key, "v:<json>" a set member, "i:<n>" an item by index, "." the item
// itself. A member is a leaf value, an atomic list or object, or a list
// item's existence (a path ending in ".").
type FieldSet map[string][]string

const sep = "\x00"

func (s FieldSet) add(path []string) { s[strings.Join(path, sep)] = append([]string(nil), path...) }

// Has tells whether the path is a member.
func (s FieldSet) Has(path []string) bool { _, ok := s[strings.Join(path, sep)]; return ok }

// Union returns s ∪ o.
func (s FieldSet) Union(o FieldSet) FieldSet {
	out := make(FieldSet, len(s)+len(o))
	for k, v := range s {
		out[k] = v
	}
	for k, v := range o {
		out[k] = v
	}
	return out
}

// Difference returns s − o.
func (s FieldSet) Difference(o FieldSet) FieldSet {
	out := FieldSet{}
	for k, v := range s {
		if _, ok := o[k]; !ok {
			out[k] = v
		}
	}
	return out
}

// Paths lists the members in a stable order.
func (s FieldSet) Paths() [][]string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([][]string, len(keys))
	for i, k := range keys {
		out[i] = s[k]
	}
	return out
}

// FieldsOf returns the members of an object's fields, following the list
// rules of schema.go. skip says which paths are not tracked.
func FieldsOf(obj map[string]any, skip func(path []string) bool) FieldSet {
	s := FieldSet{}
	collectObject(s, obj, nil, nil, skip)
	return s
}

// collectObject adds the members under an object at path; names is the
// path's field names, which the list rules match.
func collectObject(s FieldSet, m map[string]any, path, names []string, skip func([]string) bool) {
	for k, v := range m {
		p := appendPath(path, "f:"+k)
		if skip != nil && skip(p) {
			continue
		}
		collect(s, v, p, appendPath(names, k), skip)
	}
}

// collect adds the members of the value at path.
func collect(s FieldSet, v any, path, names []string, skip func([]string) bool) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			s.add(path)
			return
		}
		collectObject(s, x, path, names, skip)
	case []any:
		rule := Rule(names)
		if rule.Kind == Atomic || len(x) == 0 {
			s.add(path)
			return
		}
		for _, item := range x {
			collectItem(s, item, rule, path, names, skip)
		}
	default:
		s.add(path)
	}
}

// collectItem adds the members of one item of a merging list.
func collectItem(s FieldSet, item any, rule ListRule, path, names []string, skip func([]string) bool) {
	if rule.Kind == Set {
		s.add(appendPath(path, setElement(item)))
		return
	}
	m, ok := item.(map[string]any)
	if !ok {
		return
	}
	ip := appendPath(path, keyElement(rule.Key, m[rule.Key]))
	s.add(appendPath(ip, "."))
	collectObject(s, m, ip, names, skip)
}

func setElement(v any) string {
	b, _ := json.Marshal(v)
	return "v:" + string(b)
}

func keyElement(key string, v any) string {
	b, _ := json.Marshal(map[string]any{key: v})
	return "k:" + string(b)
}

// ValueAt finds the value at a member path; ok is false when it is absent.
func ValueAt(obj any, path []string) (any, bool) {
	cur := obj
	for _, e := range path {
		switch {
		case e == ".":
		case strings.HasPrefix(e, "f:"):
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[e[2:]]; !ok {
				return nil, false
			}
		default:
			l, ok := cur.([]any)
			if !ok {
				return nil, false
			}
			i := findElement(l, e)
			if i < 0 {
				return nil, false
			}
			cur = l[i]
		}
	}
	return cur, true
}

// findElement finds the list item a k:, v: or i: element names.
func findElement(l []any, e string) int {
	switch {
	case strings.HasPrefix(e, "k:"):
		want, err := DecodeObject([]byte(e[2:]))
		if err != nil {
			return -1
		}
		for i, item := range l {
			m, ok := item.(map[string]any)
			if !ok {
				continue
			}
			match := true
			for k, v := range want {
				if !Equal(m[k], v) {
					match = false
				}
			}
			if match {
				return i
			}
		}
	case strings.HasPrefix(e, "v:"):
		want, err := Decode([]byte(e[2:]))
		if err != nil {
			return -1
		}
		for i, item := range l {
			if Equal(item, want) {
				return i
			}
		}
	case strings.HasPrefix(e, "i:"):
		if i, err := strconv.Atoi(e[2:]); err == nil && i >= 0 && i < len(l) {
			return i
		}
	}
	return -1
}

// RemovePath deletes a member from obj in place: a field, a set member, or
// (for a path ending in ".") a whole list item.
func RemovePath(obj map[string]any, path []string) {
	if len(path) == 0 {
		return
	}
	if path[len(path)-1] == "." {
		path = path[:len(path)-1]
	}
	parentPath, last := path[:len(path)-1], path[len(path)-1]
	parent, ok := ValueAt(obj, parentPath)
	if !ok {
		return
	}
	switch p := parent.(type) {
	case map[string]any:
		if strings.HasPrefix(last, "f:") {
			delete(p, last[2:])
		}
	case []any:
		if i := findElement(p, last); i >= 0 {
			setAt(obj, parentPath, append(p[:i:i], p[i+1:]...))
		}
	}
}

// setAt replaces the value at a field path (used to shorten a list).
func setAt(obj map[string]any, path []string, v any) {
	parent, ok := ValueAt(obj, path[:len(path)-1])
	if !ok {
		return
	}
	last := path[len(path)-1]
	switch p := parent.(type) {
	case map[string]any:
		p[last[2:]] = v
	case []any:
		if i := findElement(p, last); i >= 0 {
			p[i] = v
		}
	}
}

// PathString writes a member path as Kubernetes' conflict messages do:
// .spec.template.spec.containers[name="web"].image.
func PathString(path []string) string {
	var b bytes.Buffer
	for _, e := range path {
		switch {
		case e == ".":
		case strings.HasPrefix(e, "f:"):
			b.WriteString("." + e[2:])
		case strings.HasPrefix(e, "k:"):
			m, err := DecodeObject([]byte(e[2:]))
			if err != nil {
				b.WriteString("[" + e[2:] + "]")
				continue
			}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			parts := make([]string, len(keys))
			for i, k := range keys {
				v, _ := json.Marshal(m[k])
				parts[i] = k + "=" + string(v)
			}
			b.WriteString("[" + strings.Join(parts, ",") + "]")
		case strings.HasPrefix(e, "v:"):
			b.WriteString("[=" + e[2:] + "]")
		case strings.HasPrefix(e, "i:"):
			b.WriteString("[" + e[2:] + "]")
		}
	}
	return b.String()
}
