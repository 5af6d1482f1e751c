package main

import (
	"slices"
	"strings"
	"time"
)

// step is one line of the waterfall.
type step struct {
	Component string // the service that did it (Jaeger's service name)
	Name      string
	Detail    string // what the step decided or touched, if anything
	Start     time.Time
	Duration  time.Duration
	Depth     int  // nesting under the steps above it
	Instant   bool // a moment (an Event, the Ready condition), not an interval
	Coarse    bool // its time is known to the whole second only
}

// stepOptions choose what stepsFor keeps.
type stepOptions struct {
	// Pod is the Pod's key (namespace/name): spans of other Pods of the
	// same trace (a Deployment's siblings) are left out.
	Pod string
	// AllSpans keeps every span of the Pod; otherwise the gRPC plumbing,
	// the Event writes and the scheduler's no-op extension points go.
	AllSpans bool
}

// anonymousScope is the instrumentation scope of spans from tracers with
// no name: the container runtime's client library inside the kubelet
// (snapshots, unpacking, registry requests under PullImage).
const anonymousScope = "go.opentelemetry.io/otel/sdk/tracer"

// minorSpans are spans the default view leaves out: the scheduler's
// extension points around Filter, Score and Bind, which take microseconds
// and decide nothing the SchedulePod line does not already say.
var minorSpans = map[string]bool{
	"scheduler/PreFilter": true, "scheduler/PreScore": true, "scheduler/Reserve": true,
	"scheduler/Permit": true, "scheduler/WaitOnPermit": true, "scheduler/PreBind": true,
	"scheduler/PostBind": true,
}

// stepsFor turns a trace into the steps of one Pod's birth. Each step
// follows its parent, siblings by start time; a block of steps that one
// component took up from an object it watched (a hand-over, drawn from the
// left) is placed by its start time among the other blocks. Unless
// o.AllSpans, blocks that start after the Pod was first Ready are left out
// and counted in omitted.
func stepsFor(spans []span, o stepOptions) (steps []step, omitted int) {
	t := newTree(spans)
	birth := t.birthOf(o.Pod)
	var out []step
	var block []int // per step, the index of the first step of its block
	// parent is the nearest kept ancestor's index in out, or -1.
	var walk func(id string, parent int)
	walk = func(id string, parent int) {
		s := t.byID[id]
		if !t.ofPod(id, o.Pod) || (!o.AllSpans && !birth.keeps(t, s)) {
			return
		}
		if o.AllSpans || !t.noise(s) {
			st := step{Component: s.Service, Name: s.Name, Detail: t.detail(s), Start: s.Start, Duration: s.Duration, Depth: t.depth(s, out, parent)}
			b := len(out)
			if st.Depth > 0 {
				b = block[parent]
			}
			out, block = append(out, st), append(block, b)
			parent = len(out) - 1
		}
		if !o.AllSpans && isEventWrite(s) {
			return
		}
		for _, c := range t.children[id] {
			walk(c, parent)
		}
	}
	for _, r := range t.roots {
		walk(r, -1)
	}
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := out[block[a]].Start.Compare(out[block[b]].Start); c != 0 {
			return c
		}
		return block[a] - block[b]
	})
	readyAt, ready := firstReady(out)
	sorted := make([]step, 0, len(out))
	for _, j := range order {
		if !o.AllSpans && ready && out[block[j]].Start.After(readyAt) {
			omitted++
			continue
		}
		sorted = append(sorted, out[j])
	}
	return sorted, omitted
}

// firstReady is when the kubelet's FirstReadiness span first ended: the
// end of the birth. What a component took up after it (a sandbox made again
// after a restart, later status writes) is not the birth.
func firstReady(steps []step) (time.Time, bool) {
	var at time.Time
	for _, s := range steps {
		if s.Component == "kubelet" && s.Name == "FirstReadiness" {
			if end := s.Start.Add(s.Duration); at.IsZero() || end.Before(at) {
				at = end
			}
		}
	}
	return at, !at.IsZero()
}

// depth indents a step under its parent step when the parent's component
// did it, or called it and waited (a server span whose caller is a client
// span: a component's request to the apiserver, the apiserver's etcd
// transaction); a step that another component took up later from an object
// it watched starts again at the left, one block per hand-over.
func (t *tree) depth(s span, out []step, parent int) int {
	if parent < 0 {
		return 0
	}
	p := out[parent]
	if p.Component == s.Service || (s.Attrs["span.kind"] == "server" && t.byID[s.Parent].Attrs["span.kind"] == "client") {
		return p.Depth + 1
	}
	return 0
}

// tree indexes a trace's spans by id and parent.
type tree struct {
	byID     map[string]span
	children map[string][]string
	roots    []string
	// pods is, per span, the Pods named in its subtree.
	pods map[string]map[string]bool
}

func newTree(spans []span) *tree {
	t := &tree{byID: map[string]span{}, children: map[string][]string{}, pods: map[string]map[string]bool{}}
	for _, s := range spans {
		t.byID[s.ID] = s
	}
	for _, s := range spans {
		if _, ok := t.byID[s.Parent]; ok && s.Parent != s.ID {
			t.children[s.Parent] = append(t.children[s.Parent], s.ID)
		} else {
			t.roots = append(t.roots, s.ID)
		}
	}
	byStart := func(a, b string) int {
		if c := t.byID[a].Start.Compare(t.byID[b].Start); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	}
	for _, c := range t.children {
		slices.SortFunc(c, byStart)
	}
	slices.SortFunc(t.roots, byStart)
	for _, r := range t.roots {
		t.collectPods(r)
	}
	return t
}

func (t *tree) collectPods(id string) map[string]bool {
	set := map[string]bool{}
	if p := podOf(t.byID[id]); p != "" {
		set[p] = true
	}
	for _, c := range t.children[id] {
		for p := range t.collectPods(c) {
			set[p] = true
		}
	}
	t.pods[id] = set
	return set
}

// podOf is the Pod a span names: the scheduler's and kubelet's "pod"
// attribute, the key of an etcd operation on a Pod, or the key of a Pod's
// watch event published to NATS.
func podOf(s span) string {
	if p := s.Attrs["pod"]; p != "" {
		return p
	}
	if s.Attrs["resource"] == "pods" && s.Attrs["key"] != "" {
		return s.Attrs["key"]
	}
	if k, ok := strings.CutPrefix(s.Attrs["etcd.key"], "/registry/pods/"); ok {
		return k
	}
	return ""
}

// ofPod reports whether span id belongs to pod's birth: its nearest span
// naming a Pod (itself or an ancestor) names pod, or none does and its
// subtree names no Pod or names pod among others (a reconcile that created
// several Pods). Under a span whose parent Jaeger does not hold yet (a
// trace still arriving), a subtree naming no Pod is kept only when the
// trace names no other Pod: it may be a sibling's.
func (t *tree) ofPod(id, pod string) bool {
	if pod == "" {
		return true
	}
	top := t.byID[id]
	for cur, seen := id, 0; seen <= len(t.byID); seen++ {
		s, ok := t.byID[cur]
		if !ok {
			break
		}
		if p := podOf(s); p != "" {
			return p == pod
		}
		top, cur = s, s.Parent
	}
	set := t.pods[id]
	if set[pod] {
		return true
	}
	if len(set) > 0 {
		return false
	}
	if top.Parent == "" {
		return true
	}
	for _, r := range t.roots {
		for p := range t.pods[r] {
			if p != pod {
				return false
			}
		}
	}
	return true
}

// noise reports spans the default view leaves out.
func (t *tree) noise(s span) bool {
	if minorSpans[s.Service+"/"+s.Name] || isEventWrite(s) || s.Attrs["otel.scope.name"] == anonymousScope {
		return true
	}
	// A call is drawn once, by its server: the client side repeats it (the
	// apiserver's etcd transactions are drawn from the client side: etcd's
	// own spans are not there when etcd does not export them).
	if s.Attrs["span.kind"] == "client" && s.Attrs["db.system"] == "" {
		return true
	}
	if !isGRPC(s) {
		return false
	}
	// The apiserver's REST gateway calling itself repeats the request.
	parent, ok := t.byID[s.Parent]
	return ok && parent.Service == s.Service && parent.Attrs["span.kind"] == "client"
}

// isEventWrite reports the writing of an Event: recorded by every
// component along the way, it is not a step of the birth.
func isEventWrite(s span) bool {
	return strings.HasPrefix(s.Attrs["etcd.key"], "/registry/events/") || s.Attrs["resource"] == "events" ||
		strings.Contains(s.Name, "/events") || strings.Contains(s.Name, ".Events/")
}

// isGRPC reports a span of a gRPC call (otelgrpc's attribute, under its
// current and its earlier semantic-convention name).
func isGRPC(s span) bool {
	return s.Attrs["rpc.system.name"] == "grpc" || s.Attrs["rpc.system"] == "grpc"
}
