package patch

// diff walks two versions of an object together and collects the members
// that next adds or changes and those it removes, in one pass over both
// (FieldsOf on each and a lookup per member would cost a walk per field).
func diff(prev, next map[string]any, skip func([]string) bool) (changed, removed FieldSet) {
	changed, removed = FieldSet{}, FieldSet{}
	d := differ{changed: changed, removed: removed, skip: skip}
	d.objects(prev, next, nil, nil)
	return changed, removed
}

type differ struct {
	changed, removed FieldSet
	skip             func([]string) bool
}

func (d differ) objects(prev, next map[string]any, path, names []string) {
	for k, nv := range next {
		p := appendPath(path, "f:"+k)
		if d.skip != nil && d.skip(p) {
			continue
		}
		n := appendPath(names, k)
		if pv, ok := prev[k]; ok {
			d.values(pv, nv, p, n)
		} else {
			collect(d.changed, nv, p, n, d.skip)
		}
	}
	for k, pv := range prev {
		if _, ok := next[k]; ok {
			continue
		}
		p := appendPath(path, "f:"+k)
		if d.skip == nil || !d.skip(p) {
			collect(d.removed, pv, p, appendPath(names, k), d.skip)
		}
	}
}

func (d differ) values(prev, next any, path, names []string) {
	pm, pok := prev.(map[string]any)
	nm, nok := next.(map[string]any)
	if pok && nok && len(pm) > 0 && len(nm) > 0 {
		d.objects(pm, nm, path, names)
		return
	}
	pl, pok := prev.([]any)
	nl, nok := next.([]any)
	if rule := Rule(names); pok && nok && len(pl) > 0 && len(nl) > 0 && rule.Kind != Atomic {
		d.lists(pl, nl, rule, path, names)
		return
	}
	if Equal(prev, next) {
		return
	}
	// A leaf changed, or the value changed shape: next's members are new
	// and prev's that next lacks are gone.
	before, after := FieldSet{}, FieldSet{}
	collect(before, prev, path, names, d.skip)
	collect(after, next, path, names, d.skip)
	for k, p := range after {
		d.changed[k] = p
	}
	for k, p := range before.Difference(after) {
		d.removed[k] = p
	}
}

func (d differ) lists(prev, next []any, rule ListRule, path, names []string) {
	index := func(l []any) map[string]any {
		out := make(map[string]any, len(l))
		for _, item := range l {
			out[itemElement(item, rule)] = item
		}
		return out
	}
	pi, ni := index(prev), index(next)
	for e, item := range ni {
		old, ok := pi[e]
		switch {
		case !ok:
			collectItem(d.changed, item, rule, path, names, d.skip)
		case rule.Kind == Map:
			om, _ := old.(map[string]any)
			nm, _ := item.(map[string]any)
			d.objects(om, nm, appendPath(path, e), names)
		}
	}
	for e, item := range pi {
		if _, ok := ni[e]; !ok {
			collectItem(d.removed, item, rule, path, names, d.skip)
		}
	}
}

func itemElement(item any, rule ListRule) string {
	if rule.Kind == Set {
		return setElement(item)
	}
	m, _ := item.(map[string]any)
	return keyElement(rule.Key, m[rule.Key])
}
