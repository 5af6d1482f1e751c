package watchcache

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"podline.dev/pkg/clock"
	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// podBuilder builds test Pods: MakePod("a").Label("app", "web").Obj().
type podBuilder struct{ p *corev1.Pod }

func MakePod(name string) *podBuilder {
	return &podBuilder{p: &corev1.Pod{
		ApiVersion: "v1",
		Kind:       "Pod",
		Metadata:   &metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       &corev1.PodSpec{},
	}}
}

func (b *podBuilder) Namespace(ns string) *podBuilder { b.p.Metadata.Namespace = ns; return b }
func (b *podBuilder) Node(n string) *podBuilder       { b.p.Spec.NodeName = n; return b }
func (b *podBuilder) RV(rev int64) *podBuilder {
	b.p.Metadata.ResourceVersion = strconv.FormatInt(rev, 10)
	return b
}
func (b *podBuilder) Label(k, v string) *podBuilder {
	if b.p.Metadata.Labels == nil {
		b.p.Metadata.Labels = map[string]string{}
	}
	b.p.Metadata.Labels[k] = v
	return b
}
func (b *podBuilder) Obj() *corev1.Pod { return b.p }

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// newCache returns an initialized cache with a fake clock: objs at revision.
func newCache(t testing.TB, revision int64, objs []object.Object, opts ...Option) (*Cache, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(t0)
	c := New(append([]Option{WithClock(clk), WithExemplar(&corev1.Pod{})}, opts...)...)
	c.Replace(objs, revision)
	return c, clk
}

// source plays etcd: it numbers changes, stamps resourceVersion, applies
// them to the cache and keeps the log of what it applied.
type source struct {
	t     testing.TB
	c     *Cache
	rev   int64
	state map[string]*corev1.Pod
	log   []entry // the full history, with the state each change replaced
}

// newSource starts from the cache's current state.
func newSource(t testing.TB, c *Cache) *source {
	objs, rev := c.List(Filter{})
	s := &source{t: t, c: c, rev: rev, state: map[string]*corev1.Pod{}}
	for _, o := range objs {
		s.state[object.Key(o)] = o.(*corev1.Pod)
	}
	return s
}

func (s *source) put(p *corev1.Pod) *corev1.Pod {
	s.t.Helper()
	s.rev++
	p.Metadata.ResourceVersion = strconv.FormatInt(s.rev, 10)
	key := object.Key(p)
	typ := watch.Added
	var prev object.Object
	if old, ok := s.state[key]; ok {
		typ, prev = watch.Modified, old
	}
	if err := s.c.Apply(Event{Type: typ, Object: p, PrevObject: prev, Revision: s.rev}); err != nil {
		s.t.Fatalf("Apply(%s %s @%d): %v", typ, key, s.rev, err)
	}
	s.log = append(s.log, entry{typ: typ, obj: p, prev: prev, rev: s.rev})
	s.state[key] = p
	return p
}

func (s *source) del(key string) *corev1.Pod {
	s.t.Helper()
	old, ok := s.state[key]
	if !ok {
		s.t.Fatalf("delete of unknown %s", key)
	}
	s.rev++
	last := object.Copy(old)
	last.Metadata.ResourceVersion = strconv.FormatInt(s.rev, 10)
	if err := s.c.Apply(Event{Type: watch.Deleted, Object: last, PrevObject: old, Revision: s.rev}); err != nil {
		s.t.Fatalf("Apply(DELETED %s @%d): %v", key, s.rev, err)
	}
	s.log = append(s.log, entry{typ: watch.Deleted, obj: last, prev: old, rev: s.rev})
	delete(s.state, key)
	return last
}

func (s *source) progress(n int64) {
	s.rev += n
	s.c.Progress(s.rev)
}

// want is the stream a watcher with filter f must see for the log entries
// after from, worked out here from the spec, not by the cache's code.
func want(log []entry, from int64, f Filter) []string {
	var out []string
	for _, e := range log {
		if e.rev <= from {
			continue
		}
		cur := e.typ != watch.Deleted && f.Matches(e.obj)
		old := e.prev != nil && f.Matches(e.prev)
		switch {
		case cur && !old:
			out = append(out, describe(watch.Added, e.obj))
		case cur && old:
			out = append(out, describe(watch.Modified, e.obj))
		case old:
			// The last matching state, at the revision of the change.
			out = append(out, describeAt(watch.Deleted, e.prev, e.rev))
		}
	}
	return out
}

// describe prints an event the way tests compare them.
func describe(typ watch.EventType, o object.Object) string {
	return describeAt(typ, o, 0)
}

func describeAt(typ watch.EventType, o object.Object, rev int64) string {
	m := o.GetMetadata()
	rv := m.GetResourceVersion()
	if rev != 0 {
		rv = strconv.FormatInt(rev, 10)
	}
	var labels []string
	for _, k := range slices.Sorted(maps.Keys(m.GetLabels())) {
		labels = append(labels, k+"="+m.GetLabels()[k])
	}
	if typ == watch.Bookmark {
		return fmt.Sprintf("BOOKMARK @%s", rv)
	}
	s := fmt.Sprintf("%s %s @%s", typ, object.Key(o), rv)
	if node := nodeOf(o); node != "" {
		s += " node=" + node
	}
	if len(labels) > 0 {
		s += " {" + strings.Join(labels, ",") + "}"
	}
	return s
}

func nodeOf(o object.Object) string {
	if p, ok := o.(*corev1.Pod); ok {
		return p.GetSpec().GetNodeName()
	}
	return ""
}

func describeAll(evs []watch.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = describe(ev.Type, ev.Object)
	}
	return out
}

// guard bounds every receive, so that a broken cache fails a test instead
// of hanging it; no test waits on it when the cache is right.
const guard = 10 * time.Second

func next(t testing.TB, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatalf("watch closed, want an event")
		}
		return ev
	case <-time.After(guard):
		t.Fatalf("no event within %v", guard)
	}
	return watch.Event{}
}

func collect(t testing.TB, w watch.Interface, n int) []watch.Event {
	t.Helper()
	out := make([]watch.Event, 0, n)
	for range n {
		out = append(out, next(t, w))
	}
	return out
}

// drain reads until the watch is closed and returns what it read.
func drain(t testing.TB, w watch.Interface) []watch.Event {
	t.Helper()
	var out []watch.Event
	timeout := time.After(guard)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-timeout:
			t.Fatalf("watch not closed within %v", guard)
		}
	}
}

func equal(t testing.TB, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	t.Errorf("%s:\n got %d: %s\nwant %d: %s", what, len(got), strings.Join(got, "\n     "), len(want), strings.Join(want, "\n     "))
}

func labelIs(k, v string) func(map[string]string) bool {
	return func(l map[string]string) bool { return l[k] == v }
}

func onNode(n string) func(object.Object) bool {
	return func(o object.Object) bool { return nodeOf(o) == n }
}
