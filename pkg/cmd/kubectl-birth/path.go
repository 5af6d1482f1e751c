package main

// birthPath is the part of a trace that is one Pod's birth: the spans on
// the way to the spans naming the Pod (the apply, the reconciles that made
// its ReplicaSet and the Pod), everything under the spans naming it (its
// scheduling, the kubelet's work), and the work each of those did while it
// ran (a request's stages, the calls a reconcile made). Left out are the
// reconciles that later writes set off (status updates answered by yet
// another sync), which are in the same trace but not the birth.
type birthPath struct {
	on map[string]bool // span ids on the way to or under the Pod's spans
}

// birthOf is pod's birth path in t, or nil when no span names pod (then
// every span that is not another Pod's is kept).
func (t *tree) birthOf(pod string) *birthPath {
	if pod == "" {
		return nil
	}
	b := &birthPath{on: map[string]bool{}}
	var under func(id string)
	under = func(id string) {
		b.on[id] = true
		for _, c := range t.children[id] {
			under(c)
		}
	}
	for id, s := range t.byID {
		if podOf(s) != pod {
			continue
		}
		under(id)
		for cur, seen := s.Parent, 0; seen < len(t.byID); seen++ {
			p, ok := t.byID[cur]
			if !ok || b.on[cur] {
				break
			}
			b.on[cur] = true
			cur = p.Parent
		}
	}
	if len(b.on) == 0 {
		return nil
	}
	return b
}

// keeps reports whether s is on the path, or work that a span on the path
// did while it ran: every step up to the path is within one component or
// a call and its answer (a server span under its client span). Spans under
// a parent that has not reached Jaeger yet are kept (ofPod leaves them out
// when they may be a sibling's).
func (b *birthPath) keeps(t *tree, s span) bool {
	if b == nil || b.on[s.ID] {
		return true
	}
	for cur, seen := s, 0; seen < len(t.byID); seen++ {
		p, ok := t.byID[cur.Parent]
		if !ok {
			// A parent Jaeger does not hold yet: ofPod has decided.
			return cur.Parent != ""
		}
		if p.Service != cur.Service && (cur.Attrs["span.kind"] != "server" || p.Attrs["span.kind"] != "client") {
			return false
		}
		if b.on[p.ID] {
			return true
		}
		cur = p
	}
	return false
}
