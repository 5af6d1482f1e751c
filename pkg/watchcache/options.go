package watchcache

import (
	"time"

	"podline.dev/pkg/clock"
	"podline.dev/pkg/object"
)

// Defaults. See doc.go for why these sizes.
const (
	// DefaultCapacity is the number of events the ring keeps: the history a
	// watch may resume from without a relist.
	DefaultCapacity = 1024
	// DefaultWatcherBuffer is how many events one watcher may lag behind
	// Apply before it is dropped as too slow.
	DefaultWatcherBuffer = 256
	// DefaultBookmarkInterval is Kubernetes' bookmark frequency.
	DefaultBookmarkInterval = time.Minute
	// DefaultFreshTimeout bounds WaitUntilFresh, as kube-apiserver's cacher
	// bounds its wait for a too-large resourceVersion (3s).
	DefaultFreshTimeout = 3 * time.Second
)

// Option configures a Cache.
type Option func(*config)

type config struct {
	capacity         int
	watcherBuffer    int
	bookmarkInterval time.Duration
	freshTimeout     time.Duration
	clock            clock.Clock
	exemplar         object.Object
	trigger          func(object.Object) string
}

func defaultConfig() config {
	return config{
		capacity:         DefaultCapacity,
		watcherBuffer:    DefaultWatcherBuffer,
		bookmarkInterval: DefaultBookmarkInterval,
		freshTimeout:     DefaultFreshTimeout,
		clock:            clock.Real{},
	}
}

// WithCapacity sets the ring size, the number of past events kept for
// watches that resume from an older revision. Values below 1 mean 1.
func WithCapacity(n int) Option {
	return func(c *config) { c.capacity = max(n, 1) }
}

// WithWatcherBuffer sets how many undelivered events a watcher may hold
// before it is closed as too slow. Values below 1 mean 1.
func WithWatcherBuffer(n int) Option {
	return func(c *config) { c.watcherBuffer = max(n, 1) }
}

// WithBookmarkInterval sets the least time between two events (bookmark or
// not) before an idle watcher that asked for bookmarks gets one.
func WithBookmarkInterval(d time.Duration) Option {
	return func(c *config) { c.bookmarkInterval = d }
}

// WithFreshTimeout bounds how long WaitUntilFresh (and a Watch from a
// revision the cache has not reached) waits before it returns Kubernetes'
// "Too large resource version" Timeout. Zero or less: wait as long as the
// context allows.
func WithFreshTimeout(d time.Duration) Option {
	return func(c *config) { c.freshTimeout = d }
}

// WithClock sets the clock; tests pass a clock.Fake.
func WithClock(clk clock.Clock) Option {
	return func(c *config) { c.clock = clk }
}

// WithExemplar names the resource's type (e.g. &corev1.Pod{}); bookmark
// objects are new, empty messages of that type. Without it the cache takes
// the type of the first object it is given, and sends no bookmark before.
func WithExemplar(obj object.Object) Option {
	return func(c *config) { c.exemplar = obj }
}

// WithTrigger indexes watchers by one value of the objects, as
// kube-apiserver's indexed triggers do for a Pod's spec.nodeName: a watcher
// whose Filter is Triggered can only match objects whose trigger value is
// its Filter.Trigger, so Apply looks only at the watchers of the value of
// the event's object (and of its previous state) and at the untriggered
// ones, not at every watcher. fn must be fast and must not block.
func WithTrigger(fn func(obj object.Object) string) Option {
	return func(c *config) { c.trigger = fn }
}
