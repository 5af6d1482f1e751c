package patch

import (
	"fmt"
	"strings"
)

// Operations recorded in managedFields.
const (
	OpApply  = "Apply"
	OpUpdate = "Update"
)

// Entry is one managedFields entry: what one manager owns through one
// operation, API version and subresource.
type Entry struct {
	Manager, Operation, APIVersion, Subresource string
	// Time is when the entry last changed (Unix seconds).
	Time int64
	Set  FieldSet
}

func (e *Entry) is(manager, op, subresource string) bool {
	return e.Manager == manager && e.Operation == op && e.Subresource == subresource
}

// Managed is the managedFields of one object.
type Managed []*Entry

// find returns the entry of a manager and operation, adding it if absent.
func (m *Managed) find(manager, op, apiVersion, subresource string) *Entry {
	for _, e := range *m {
		if e.is(manager, op, subresource) {
			return e
		}
	}
	e := &Entry{Manager: manager, Operation: op, APIVersion: apiVersion, Subresource: subresource, Set: FieldSet{}}
	*m = append(*m, e)
	return e
}

// prune drops entries that own nothing.
func (m Managed) prune() Managed {
	out := m[:0]
	for _, e := range m {
		if len(e.Set) > 0 {
			out = append(out, e)
		}
	}
	return out
}

// Update records a non-apply write by manager (create, update, or a
// patch): the fields it added or changed become its own and no one
// else's, and the fields it removed are no one's. Only the writer's entry
// gets a new time; a write that changes nothing changes no entry.
func (m Managed) Update(prev, next map[string]any, manager, apiVersion, subresource string, now int64, skip func([]string) bool) Managed {
	changed, removed := diff(prev, next, skip)
	return m.Record(changed, removed, manager, apiVersion, subresource, now)
}

// Record is Update given the members a write added or changed and those
// it removed: a create's are FieldsOfJSON of the new object, and none.
func (m Managed) Record(changed, removed FieldSet, manager, apiVersion, subresource string, now int64) Managed {
	if len(changed) == 0 && len(removed) == 0 {
		return m.prune()
	}
	out := append(Managed(nil), m...)
	own := out.find(manager, OpUpdate, apiVersion, subresource)
	for i, e := range out {
		if e == own {
			out[i] = &Entry{Manager: manager, Operation: OpUpdate, APIVersion: apiVersion, Subresource: subresource,
				Time: now, Set: e.Set.Difference(removed).Union(changed)}
			continue
		}
		if set := e.Set.Difference(removed).Difference(changed); len(set) != len(e.Set) {
			cp := *e
			cp.Set = set
			out[i] = &cp
		}
	}
	return out.prune()
}

// Conflict is one field an applier would take from another manager.
type Conflict struct {
	Manager, APIVersion, Subresource string
	Path                             []string
}

// ConflictError lists the conflicts of one apply.
type ConflictError struct{ Conflicts []Conflict }

// Error words the conflicts as Kubernetes does:
// Apply failed with 1 conflict: conflict with "m" using apps/v1: .spec.replicas
func (e *ConflictError) Error() string {
	n := len(e.Conflicts)
	var b strings.Builder
	plural := "s"
	if n == 1 {
		plural = ""
	}
	fmt.Fprintf(&b, "Apply failed with %d conflict%s: ", n, plural)
	groups := e.byManager()
	for gi, g := range groups {
		if gi > 0 {
			b.WriteString("\n")
		}
		if n == 1 {
			fmt.Fprintf(&b, "%s: %s", g[0].Describe(), PathString(g[0].Path))
			continue
		}
		fmt.Fprintf(&b, "conflicts with %s:", strings.TrimPrefix(g[0].Describe(), "conflict with "))
		for _, c := range g {
			b.WriteString("\n- " + PathString(c.Path))
		}
	}
	return b.String()
}

// Describe is `conflict with "m" [with subresource "s"] using v`.
func (c Conflict) Describe() string {
	s := fmt.Sprintf("conflict with %q", c.Manager)
	if c.Subresource != "" {
		s += fmt.Sprintf(" with subresource %q", c.Subresource)
	}
	return s + " using " + c.APIVersion
}

func (e *ConflictError) byManager() [][]Conflict {
	var out [][]Conflict
	idx := map[string]int{}
	for _, c := range e.Conflicts {
		k := c.Manager + sep + c.Subresource + sep + c.APIVersion
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], c)
	}
	return out
}
