package patch

import (
	"fmt"
	"strings"
)

// Directives of a strategic merge patch.
const (
	directivePatch       = "$patch"
	directiveRetainKeys  = "$retainKeys"
	prefixSetOrder       = "$setElementOrder/"
	prefixDeletePrimList = "$deleteFromPrimitiveList/"
)

// StrategicMerge applies a strategic merge patch to the object doc and
// returns the result; doc is not changed. Objects merge as in a JSON merge
// patch; lists merge by the rules of schema.go; and the directives do what
// Kubernetes' do: {"$patch": "replace"} replaces an object or list,
// {"$patch": "delete"} removes an object or a list item, "$retainKeys"
// drops the fields it does not name, "$setElementOrder/<list>" orders a
// merged list, "$deleteFromPrimitiveList/<list>" removes scalars.
func StrategicMerge(doc, patch map[string]any) (map[string]any, error) {
	out, deleted, err := mergeObject(doc, patch, nil)
	if err != nil {
		return nil, err
	}
	if deleted {
		return map[string]any{}, nil
	}
	return out, nil
}

func mergeObject(orig, patch map[string]any, path []string) (map[string]any, bool, error) {
	switch patch[directivePatch] {
	case nil:
	case "replace":
		out, err := stripDirectives(patch, path)
		return out, false, err
	case "delete":
		return nil, true, nil
	default:
		return nil, false, badPatch(fmt.Sprintf("unknown patch type: %v in map: %v", patch[directivePatch], patch))
	}
	out := cloneMap(orig)
	var orders map[string][]any
	for k, v := range patch {
		switch {
		case k == directivePatch || k == directiveRetainKeys:
			continue
		case strings.HasPrefix(k, prefixSetOrder):
			list, ok := v.([]any)
			if !ok {
				return nil, false, badPatch(fmt.Sprintf("%s must be a list", k))
			}
			if orders == nil {
				orders = map[string][]any{}
			}
			orders[strings.TrimPrefix(k, prefixSetOrder)] = list
			continue
		case strings.HasPrefix(k, prefixDeletePrimList):
			field := strings.TrimPrefix(k, prefixDeletePrimList)
			del, ok := v.([]any)
			if !ok {
				return nil, false, badPatch(fmt.Sprintf("%s must be a list", k))
			}
			if cur, ok := out[field].([]any); ok {
				out[field] = without(cur, del)
			}
			continue
		}
		fp := appendPath(path, k)
		switch pv := v.(type) {
		case nil:
			delete(out, k)
		case map[string]any:
			ov, _ := out[k].(map[string]any)
			merged, deleted, err := mergeObject(ov, pv, fp)
			if err != nil {
				return nil, false, err
			}
			if deleted {
				delete(out, k)
			} else {
				out[k] = merged
			}
		case []any:
			ov, _ := out[k].([]any)
			merged, err := mergeList(ov, pv, fp)
			if err != nil {
				return nil, false, err
			}
			out[k] = merged
		default:
			out[k] = v
		}
	}
	for field, order := range orders {
		if cur, ok := out[field].([]any); ok {
			out[field] = reorder(cur, order, Rule(appendPath(path, field)))
		}
	}
	if rk, ok := patch[directiveRetainKeys]; ok {
		keep, ok := rk.([]any)
		if !ok {
			return nil, false, badPatch("$retainKeys must be a list")
		}
		retain := map[string]bool{}
		for _, k := range keep {
			s, _ := k.(string)
			retain[s] = true
		}
		for k := range out {
			if !retain[k] {
				delete(out, k)
			}
		}
	}
	return out, false, nil
}

func mergeList(orig, patch []any, path []string) ([]any, error) {
	rule := Rule(path)
	// A {"$patch": "replace"} item replaces the whole list with the others.
	for i, item := range patch {
		if m, ok := item.(map[string]any); ok && m[directivePatch] == "replace" && len(m) == 1 {
			rest := append(append([]any{}, patch[:i]...), patch[i+1:]...)
			return stripList(rest, path)
		}
	}
	switch rule.Kind {
	case Set:
		out := append([]any{}, orig...)
		for _, v := range patch {
			if !contains(out, v) {
				out = append(out, v)
			}
		}
		return out, nil
	case Map:
		out := append([]any{}, orig...)
		for _, item := range patch {
			pm, ok := item.(map[string]any)
			if !ok {
				return nil, badPatch(fmt.Sprintf("the list %s merges on %q, but an item is a %s", strings.Join(path, "."), rule.Key, typeName(item)))
			}
			kv, ok := pm[rule.Key]
			if !ok {
				return nil, badPatch(fmt.Sprintf("map: %v does not contain declared merge key: %s", pm, rule.Key))
			}
			i := findByKey(out, rule.Key, kv)
			if pm[directivePatch] == "delete" {
				if i >= 0 {
					out = append(out[:i:i], out[i+1:]...)
				}
				continue
			}
			var base map[string]any
			if i >= 0 {
				base, _ = out[i].(map[string]any)
			}
			merged, deleted, err := mergeObject(base, pm, path)
			if err != nil {
				return nil, err
			}
			switch {
			case deleted && i >= 0:
				out = append(out[:i:i], out[i+1:]...)
			case deleted:
			case i >= 0:
				out[i] = merged
			default:
				out = append(out, merged)
			}
		}
		return out, nil
	}
	return stripList(patch, path)
}

// stripDirectives removes directives from a replacing object.
func stripDirectives(m map[string]any, path []string) (map[string]any, error) {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if strings.HasPrefix(k, "$") {
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			s, err := stripDirectives(x, appendPath(path, k))
			if err != nil {
				return nil, err
			}
			out[k] = s
		case []any:
			s, err := stripList(x, appendPath(path, k))
			if err != nil {
				return nil, err
			}
			out[k] = s
		case nil:
		default:
			out[k] = v
		}
	}
	return out, nil
}

func stripList(l []any, path []string) ([]any, error) {
	out := make([]any, 0, len(l))
	for _, v := range l {
		if m, ok := v.(map[string]any); ok {
			if m[directivePatch] == "delete" {
				continue
			}
			s, err := stripDirectives(m, path)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
			continue
		}
		out = append(out, v)
	}
	return out, nil
}

func findByKey(list []any, key string, v any) int {
	for i, item := range list {
		if m, ok := item.(map[string]any); ok && Equal(m[key], v) {
			return i
		}
	}
	return -1
}

func contains(list []any, v any) bool {
	for _, e := range list {
		if Equal(e, v) {
			return true
		}
	}
	return false
}

func without(list, del []any) []any {
	out := make([]any, 0, len(list))
	for _, e := range list {
		if !contains(del, e) {
			out = append(out, e)
		}
	}
	return out
}

// reorder puts the items named by order first, in that order; items the
// order does not name (added by someone else) keep their relative order
// after them.
func reorder(list, order []any, rule ListRule) []any {
	ident := func(item any) any {
		if m, ok := item.(map[string]any); ok && rule.Kind == Map {
			return m[rule.Key]
		}
		return item
	}
	used := make([]bool, len(list))
	out := make([]any, 0, len(list))
	for _, o := range order {
		want := ident(o)
		for i, item := range list {
			if !used[i] && Equal(ident(item), want) {
				used[i] = true
				out = append(out, item)
				break
			}
		}
	}
	for i, item := range list {
		if !used[i] {
			out = append(out, item)
		}
	}
	return out
}
