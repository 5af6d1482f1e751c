package testing

import (
	"io"
	"log/slog"
	"slices"
	"strings"
	gotesting "testing"
	"time"

	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/object"
	"podline.dev/services/controller-manager/internal/controller"
)

// Epoch is the fake clock's start: a round date, so timestamps in tests read well.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Fixture is a controller.Context for unit tests: informers that are never
// started, a FakeConn, a FakeRecorder and a fake clock.
type Fixture struct {
	T        gotesting.TB
	Conn     *FakeConn
	Clock    *clock.Fake
	Recorder *FakeRecorder
	Context  *controller.Context
}

// NewFixture returns an empty fixture with Kubernetes' default options.
func NewFixture(t gotesting.TB) *Fixture {
	clk := clock.NewFake(Epoch)
	rec := &FakeRecorder{}
	conn := NewFakeConn(clk)
	return &Fixture{
		T: t, Conn: conn, Clock: clk, Recorder: rec,
		Context: &controller.Context{
			Conn:      conn,
			Informers: cache.NewSharedInformerFactory(0),
			Recorders: func(string) controller.EventRecorder { return rec },
			Clock:     clk,
			Log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
			Options:   controller.DefaultOptions(),
		},
	}
}

// Add stores objects in the tracker and in their informers' indexers (the
// listers), as the state the controller starts from.
func (f *Fixture) Add(objs ...object.Object) {
	f.T.Helper()
	f.Conn.Seed(objs...)
	for _, o := range objs {
		if err := f.indexer(o).Add(o); err != nil {
			f.T.Fatalf("add %s: %v", object.Key(o), err)
		}
	}
}

// AddToCache puts objects in the listers only, as objects the apiserver no
// longer has (or does not have yet).
func (f *Fixture) AddToCache(objs ...object.Object) {
	f.T.Helper()
	for _, o := range objs {
		if err := f.indexer(o).Add(o); err != nil {
			f.T.Fatalf("add %s: %v", object.Key(o), err)
		}
	}
}

// SyncCache makes the listers of the given resources ("pods", "replicasets")
// equal to the tracker, as the informers would after seeing every write.
func (f *Fixture) SyncCache(resources ...string) {
	f.T.Helper()
	for _, k := range controller.Kinds {
		if !slices.Contains(resources, k.Resource.Name) {
			continue
		}
		idx := k.Informer(f.Context).GetIndexer()
		if err := idx.Replace(f.Conn.Objects(k.Resource.Name), ""); err != nil {
			f.T.Fatal(err)
		}
	}
}

func (f *Fixture) indexer(o object.Object) cache.Indexer {
	f.T.Helper()
	res := resourceOfObject(o)
	for _, k := range controller.Kinds {
		if k.Resource.Name == res.Name && k.Resource.Group == res.Group {
			return k.Informer(f.Context).GetIndexer()
		}
	}
	f.T.Fatalf("no kind for %T", o)
	return nil
}

// ExpectWrites fails the test unless the recorded writes (create, update,
// update-status, delete), as strings, are want in order. A create of a
// generated name reads "create pods default/web-abc-*".
func (f *Fixture) ExpectWrites(want ...string) {
	f.T.Helper()
	got := ActionStrings(f.Conn.Writes())
	if !slices.Equal(got, want) {
		f.T.Errorf("writes:\n got  %s\n want %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
}

// ExpectEvents fails the test unless the recorded events are want in order.
func (f *Fixture) ExpectEvents(want ...string) {
	f.T.Helper()
	got := f.Recorder.Events()
	if !slices.Equal(got, want) {
		f.T.Errorf("events:\n got  %q\n want %q", got, want)
	}
}

// ActionStrings renders actions with Action.String.
func ActionStrings(actions []Action) []string {
	out := make([]string, len(actions))
	for i, a := range actions {
		out[i] = a.String()
	}
	return out
}
