package rules

import (
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/knftables"
)

// WriteFull fills tx with a full sync to next: every object is added (a
// no-op when it exists), every chain and every static map and set is
// flushed and written anew, and the objects existing (knftables'
// ListAll of the table) has but next lacks are flushed and deleted. The
// affinity sets survive, so a resync does not forget ClientIP affinity.
// Run as one transaction, the table never shows a half-written state.
func WriteFull(tx *knftables.Transaction, next *Ruleset, existing map[string][]string) {
	tx.Add(&knftables.Table{})
	frags := next.fragments()
	want := map[string]bool{}
	for _, f := range frags {
		for _, c := range f.Chains {
			want["chain "+c.Name] = true
			tx.Add(chainObj(c))
		}
		for _, s := range f.Sets {
			want["set "+s.Name] = true
			tx.Add(setObj(s))
		}
		for _, m := range f.Maps {
			want["map "+m.Name] = true
			tx.Add(mapObj(m))
		}
	}
	for _, m := range next.Base.Maps {
		tx.Flush(mapObj(m))
	}
	for _, s := range next.Base.Sets {
		tx.Flush(setObj(s))
	}
	for _, f := range frags {
		for _, c := range f.Chains {
			tx.Flush(chainObj(c))
			addRules(tx, c)
		}
	}
	for _, f := range frags {
		for _, e := range f.Elements {
			tx.Add(elementObj(e))
		}
	}
	stale := func(kind string) []string {
		var out []string
		for _, name := range existing[kind] {
			// Anonymous sets and maps ("__map0", the numgen vmaps) belong
			// to their rules.
			if !want[kind+" "+name] && !strings.HasPrefix(name, "__") {
				out = append(out, name)
			}
		}
		slices.Sort(out)
		return out
	}
	staleChains := stale("chain")
	for _, name := range staleChains {
		tx.Flush(&knftables.Chain{Name: name})
	}
	for _, name := range staleChains {
		tx.Delete(&knftables.Chain{Name: name})
	}
	for _, name := range stale("map") {
		tx.Delete(&knftables.Map{Name: name})
	}
	for _, name := range stale("set") {
		tx.Delete(&knftables.Set{Name: name})
	}
}

// WriteDiff fills tx with the changes from prev to next of the Services
// named in changed (namespace/name), and nothing else: new chains and sets
// are added, chains whose rules differ are flushed and rewritten, map and
// set elements that went away or changed are deleted before the new ones
// are added, and the chains and sets no longer wanted are flushed and
// deleted last, when nothing refers to them any more. prev must be what
// the table holds; the base fragments of prev and next must be equal (a
// changed base takes WriteFull).
func WriteDiff(tx *knftables.Transaction, prev, next *Ruleset, changed []string) {
	keys := slices.Clone(changed)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	type pair struct{ p, n Fragment }
	pairs := make([]pair, 0, len(keys))
	for _, k := range keys {
		pairs = append(pairs, pair{prev.Services[k], next.Services[k]})
	}
	var goneChains, goneSets []string
	for _, pr := range pairs {
		old := chainsByName(pr.p)
		oldSets := setsByName(pr.p)
		for _, c := range pr.n.Chains {
			if _, ok := old[c.Name]; !ok {
				tx.Add(chainObj(c))
			}
		}
		for _, s := range pr.n.Sets {
			if _, ok := oldSets[s.Name]; !ok {
				tx.Add(setObj(s))
			}
		}
	}
	for _, pr := range pairs {
		old := chainsByName(pr.p)
		for _, c := range pr.n.Chains {
			if o, ok := old[c.Name]; ok {
				if slices.Equal(o.Rules, c.Rules) {
					continue
				}
				tx.Flush(chainObj(c))
			}
			addRules(tx, c)
		}
		newChains := chainsByName(pr.n)
		for _, c := range pr.p.Chains {
			if _, ok := newChains[c.Name]; !ok {
				goneChains = append(goneChains, c.Name)
			}
		}
		newSets := setsByName(pr.n)
		for _, s := range pr.p.Sets {
			if _, ok := newSets[s.Name]; !ok {
				goneSets = append(goneSets, s.Name)
			}
		}
	}
	var adds []Element
	for _, pr := range pairs {
		oldEls := elementsByID(pr.p)
		newEls := elementsByID(pr.n)
		for _, e := range pr.p.Elements {
			if n, ok := newEls[e.id()]; !ok || n != e.same() {
				tx.Delete(elementKeyObj(e))
			}
		}
		for _, e := range pr.n.Elements {
			if o, ok := oldEls[e.id()]; !ok || o != e.same() {
				adds = append(adds, e)
			}
		}
	}
	for _, e := range adds {
		tx.Add(elementObj(e))
	}
	for _, name := range goneChains {
		tx.Flush(&knftables.Chain{Name: name})
	}
	for _, name := range goneChains {
		tx.Delete(&knftables.Chain{Name: name})
	}
	for _, name := range goneSets {
		tx.Delete(&knftables.Set{Name: name})
	}
}

// fragments are the base and the Services' fragments in key order.
func (rs *Ruleset) fragments() []Fragment {
	out := []Fragment{rs.Base}
	for _, k := range slices.Sorted(maps.Keys(rs.Services)) {
		out = append(out, rs.Services[k])
	}
	return out
}

// same is what makes two elements of one key equal.
func (e Element) same() string { return e.Value + "\x00" + e.Comment }

func chainsByName(f Fragment) map[string]Chain {
	m := make(map[string]Chain, len(f.Chains))
	for _, c := range f.Chains {
		m[c.Name] = c
	}
	return m
}

func setsByName(f Fragment) map[string]Set {
	m := make(map[string]Set, len(f.Sets))
	for _, s := range f.Sets {
		m[s.Name] = s
	}
	return m
}

func elementsByID(f Fragment) map[string]string {
	m := make(map[string]string, len(f.Elements))
	for _, e := range f.Elements {
		m[e.id()] = e.same()
	}
	return m
}

func addRules(tx *knftables.Transaction, c Chain) {
	for _, r := range c.Rules {
		tx.Add(&knftables.Rule{Chain: c.Name, Rule: r})
	}
}

func chainObj(c Chain) *knftables.Chain {
	ch := &knftables.Chain{Name: c.Name}
	if c.Hook != "" {
		ch.Type = knftables.PtrTo(knftables.BaseChainType(c.Type))
		ch.Hook = knftables.PtrTo(knftables.BaseChainHook(c.Hook))
		ch.Priority = knftables.PtrTo(knftables.BaseChainPriority(c.Priority))
	}
	return ch
}

func setObj(s Set) *knftables.Set {
	set := &knftables.Set{Name: s.Name, Type: s.Type}
	if s.Dynamic {
		set.Flags = []knftables.SetFlag{knftables.DynamicFlag, knftables.TimeoutFlag}
		set.Timeout = knftables.PtrTo(s.Timeout)
	}
	return set
}

func mapObj(m Map) *knftables.Map {
	return &knftables.Map{Name: m.Name, Type: m.Type}
}

func elementObj(e Element) *knftables.Element {
	el := elementKeyObj(e)
	if e.Value != "" {
		el.Value = []string{e.Value}
	}
	if e.Comment != "" {
		el.Comment = knftables.PtrTo(e.Comment)
	}
	return el
}

func elementKeyObj(e Element) *knftables.Element {
	return &knftables.Element{Set: e.Set, Map: e.Map, Key: e.Key}
}
