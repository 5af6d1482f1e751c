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
		if w := t.winnerScore(s.ID); w != "" {
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
		if w := a["score.rank.01"]; w != "" {
			add("best %s", w)
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

// winnerScore is the "score.rank.01" attribute of the Score span under a
// SchedulePod span: the winning node and its per-plugin scores.
func (t *tree) winnerScore(id string) string {
	for _, c := range t.children[id] {
		if s := t.byID[c]; s.Name == "Score" {
			if w := s.Attrs["score.rank.01"]; w != "" {
				return w
			}
		}
		if w := t.winnerScore(c); w != "" {
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
