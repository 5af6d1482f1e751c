package patch

// Apply is server-side apply of config (the applier's whole intent for
// the object, or for its subresource) by manager onto live (nil for a create). It returns the new
// object and managedFields, or a *ConflictError when config sets a field
// another manager owns to a different value and force is false.
//
// As in Kubernetes: fields the manager applied before and no longer
// applies are removed unless another manager owns them; the config merges
// into the object by the list rules of schema.go; with force, the
// applier takes the conflicting fields from their owners.
func Apply(live, config map[string]any, m Managed, manager, apiVersion, subresource string, force bool, now int64, skip func([]string) bool) (map[string]any, Managed, error) {
	applied := FieldsOf(config, skip)
	var conflicts []Conflict
	taken := map[*Entry]FieldSet{}
	for _, e := range m {
		if e.is(manager, OpApply, subresource) {
			// Its own earlier apply; the same name writing through Update
			// or a subresource is another manager, as in Kubernetes.
			continue
		}
		for k, p := range applied {
			if _, owned := e.Set[k]; !owned || p[len(p)-1] == "." {
				continue
			}
			lv, ok := ValueAt(live, p)
			cv, _ := ValueAt(config, p)
			if ok && Equal(lv, cv) {
				continue
			}
			conflicts = append(conflicts, Conflict{Manager: e.Manager, APIVersion: e.APIVersion, Subresource: e.Subresource, Path: p})
			if taken[e] == nil {
				taken[e] = FieldSet{}
			}
			taken[e][k] = p
		}
	}
	if len(conflicts) > 0 && !force {
		return nil, nil, &ConflictError{Conflicts: sortConflicts(conflicts)}
	}
	out := deepCopy(live)
	obj, _ := out.(map[string]any)
	if obj == nil {
		obj = map[string]any{}
	}
	entries := append(Managed(nil), m...)
	own := entries.find(manager, OpApply, apiVersion, subresource)
	others := FieldSet{}
	for _, e := range entries {
		if e != own {
			others = others.Union(e.Set.Difference(taken[e]))
		}
	}
	for _, p := range own.Set.Difference(applied).Difference(others).Paths() {
		RemovePath(obj, p)
	}
	merged, err := StrategicMerge(obj, config)
	if err != nil {
		return nil, nil, err
	}
	for i, e := range entries {
		switch {
		case e == own:
			entries[i] = &Entry{Manager: manager, Operation: OpApply, APIVersion: apiVersion, Subresource: subresource, Time: now, Set: applied}
		case taken[e] != nil:
			entries[i] = &Entry{Manager: e.Manager, Operation: e.Operation, APIVersion: e.APIVersion, Subresource: e.Subresource, Time: e.Time, Set: e.Set.Difference(taken[e])}
		}
	}
	return merged, entries.prune(), nil
}

func sortConflicts(cs []Conflict) []Conflict {
	// Stable by manager, then by path, so messages do not vary between runs.
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && less(cs[j], cs[j-1]); j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
	return cs
}

func less(a, b Conflict) bool {
	if a.Manager != b.Manager {
		return a.Manager < b.Manager
	}
	return PathString(a.Path) < PathString(b.Path)
}
