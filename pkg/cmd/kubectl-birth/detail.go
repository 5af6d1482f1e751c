package main

import (
	"fmt"
	"strings"
)

// detail says what a step decided or touched, from the attributes the
// components record (services/scheduler, services/kubelet, the apiserver's
// storage and admission).
func (t *tree) detail(s span) string {
	a := s.Attrs
	var parts []string
	add := func(format string, args ...any) { parts = append(parts, fmt.Sprintf(format, args...)) }
	switch {
	case s.Service == "scheduler" && s.Name == "SchedulePod":
		if n := a["node"]; n != "" {
			add("node %s", n)
		}
		if f := a["nodes.feasible"]; f != "" {
			add("%s/%s nodes feasible", f, a["nodes.evaluated"])
		}
		if w := t.winnerScore(s.ID, a["node"]); w != "" && a["node"] != "" {
			add("score %s", w)
		}
	case s.Service == "scheduler" && s.Name == "Filter":
		if f := a["nodes.feasible"]; f != "" {
			add("%s of %s nodes pass", f, a["nodes.total"])
		}
		if r := a["filter.reasons"]; r != "" {
			add("%s", r)
		}
	case s.Service == "scheduler" && s.Name == "Score":
		for i := 1; a[fmt.Sprintf("score.rank.%02d", i)] != ""; i++ {
			f := strings.Fields(a[fmt.Sprintf("score.rank.%02d", i)]) // "<node> total=<n> <plugin>=<n>..."
			if len(f) > 1 {
				add("%s %s", f[0], f[1])
			}
		}
	case a["admission.phase"] != "":
		add("%s", a["admission.phase"])
	case a["resource"] != "" && a["key"] != "":
		add("%s %s", a["resource"], a["key"])
	case a["etcd.key"] != "":
		add("%s", a["etcd.key"])
	case s.Name == "PullImage":
		add("%s", a["image"])
		if a["present"] == "true" {
			add("already present")
		}
	case s.Name == "CNI ADD" && a["ips"] != "":
		add("ip %s", a["ips"])
	case a["container"] != "":
		add("container %s", a["container"])
	case s.Name == "SyncPod":
		add("%s", a["update"])
	default:
		if n := a["node"]; n != "" {
			add("node %s", n)
		}
	}
	if code := firstOf(a, "http.response.status_code", "http.status_code"); code != "" {
		add("→ %s", code)
	}
	if a["otel.status_code"] == "ERROR" {
		add("error: %s", a["otel.status_description"])
	}
	return strings.Join(parts, ", ")
}

// winnerScore is the scores of node, the one the SchedulePod span id chose,
// from the "score.rank.NN" attributes of the Score span under it (ties
// are broken at random, so the winner need not be ranked first).
func (t *tree) winnerScore(id, node string) string {
	for _, c := range t.children[id] {
		if s := t.byID[c]; s.Name == "Score" {
			for k, v := range s.Attrs {
				if strings.HasPrefix(k, "score.rank.") && strings.HasPrefix(v, node+" ") {
					return v
				}
			}
		}
		if w := t.winnerScore(c, node); w != "" {
			return w
		}
	}
	return ""
}

func firstOf(a map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := a[k]; v != "" {
			return v
		}
	}
	return ""
}
