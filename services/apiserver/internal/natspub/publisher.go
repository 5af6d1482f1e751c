package natspub

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"podline.dev/pkg/watchstream"
	"podline.dev/proto/apis"
	"podline.dev/services/apiserver/internal/registry"
)

// Option configures a Publisher.
type Option func(*config)

type config struct {
	maxAge     time.Duration
	maxMsgs    int64
	queue      int
	progressAt time.Duration
	tls        *tls.Config
}

// WithWindow bounds the stream's window of recent events by age and count.
func WithWindow(maxAge time.Duration, maxMsgs int64) Option {
	return func(c *config) { c.maxAge, c.maxMsgs = maxAge, maxMsgs }
}

// WithQueue sets how many messages may wait for the publishing goroutine
// before further ones are dropped (and replicas backfill the gap).
func WithQueue(n int) Option { return func(c *config) { c.queue = max(n, 1) } }

// WithProgressInterval sets the least time between two progress marks of a
// resource.
func WithProgressInterval(d time.Duration) Option { return func(c *config) { c.progressAt = d } }

// WithTLS makes the connection TLS with cfg (its CA and the apiserver's
// client certificate), whatever the URL's scheme: a server that does not
// offer TLS is refused, nothing is sent in plain text. The server name is
// the URL's host unless cfg sets one. A nil cfg leaves it plain.
func WithTLS(cfg *tls.Config) Option { return func(c *config) { c.tls = cfg } }

// Publisher publishes every resource's watch events to JetStream.
type Publisher struct {
	cfg   config
	nc    *nats.Conn
	js    jetstream.JetStream
	epoch string
	queue chan queued

	streamMu sync.Mutex
	streamOK bool

	published, dropped, failed atomic.Uint64
}

// Stats counts what the publisher did.
type Stats struct {
	Published uint64 // acknowledged by JetStream
	Dropped   uint64 // not queued: the queue was full
	Failed    uint64 // not acknowledged
}

// Connect connects to the NATS server at url (retrying in the background
// while it is down) and returns a publisher that runs until ctx ends.
func Connect(ctx context.Context, url string, opts ...Option) (*Publisher, error) {
	cfg := config{maxAge: watchstream.DefaultMaxAge, maxMsgs: watchstream.DefaultMaxMsgs, queue: 8192, progressAt: time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	p := &Publisher{cfg: cfg, epoch: newEpoch(), queue: make(chan queued, cfg.queue)}
	natsOpts := []nats.Option{nats.Name("apiserver"), nats.MaxReconnects(-1), nats.RetryOnFailedConnect(true),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectHandler(func(*nats.Conn) { p.setStreamOK(false) })}
	if cfg.tls != nil {
		natsOpts = append(natsOpts, nats.Secure(cfg.tls))
	}
	nc, err := nats.Connect(url, natsOpts...)
	if err != nil {
		return nil, fmt.Errorf("natspub: %w", err)
	}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096))
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("natspub: %w", err)
	}
	p.nc, p.js = nc, js
	go p.run(ctx)
	return p, nil
}

// Stats returns the publisher's counters.
func (p *Publisher) Stats() Stats {
	return Stats{Published: p.published.Load(), Dropped: p.dropped.Load(), Failed: p.failed.Load()}
}

// Connected reports whether the connection to NATS is up.
func (p *Publisher) Connected() bool { return p.nc.IsConnected() }

// Epoch names this publisher's run; sequences start at 1 in each.
func (p *Publisher) Epoch() string { return p.epoch }

// For returns the sink of res's cacher.
func (p *Publisher) For(res apis.Resource) registry.EventSink {
	return &sink{p: p, res: res, marks: watchstream.Subject(res, "")}
}

func (p *Publisher) setStreamOK(ok bool) {
	p.streamMu.Lock()
	p.streamOK = ok
	p.streamMu.Unlock()
}

// ensureStream creates or updates the stream once per connection.
func (p *Publisher) ensureStream(ctx context.Context) error {
	p.streamMu.Lock()
	defer p.streamMu.Unlock()
	if p.streamOK {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := p.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:       watchstream.StreamName,
		Subjects:   []string{watchstream.StreamSubjects()},
		Storage:    jetstream.FileStorage,
		Retention:  jetstream.LimitsPolicy,
		Discard:    jetstream.DiscardOld,
		MaxAge:     p.cfg.maxAge,
		MaxMsgs:    p.cfg.maxMsgs,
		Duplicates: 30 * time.Second,
	})
	if err != nil {
		return err
	}
	p.streamOK = true
	return nil
}

// queued is a message and its resource's flag for a lost message.
type queued struct {
	msg  *nats.Msg
	lost *atomic.Bool
}

// enqueue hands q to the publishing goroutine, or drops it.
func (p *Publisher) enqueue(q queued) {
	select {
	case p.queue <- q:
	default:
		p.dropped.Add(1)
		q.lost.Store(true)
	}
}

// run publishes the queue in order until ctx ends.
func (p *Publisher) run(ctx context.Context) {
	defer p.nc.Close()
	var lastWarn time.Time
	for {
		var q queued
		select {
		case <-ctx.Done():
			return
		case q = <-p.queue:
		}
		var err error
		if p.nc.IsConnected() {
			err = p.ensureStream(ctx)
		} else {
			err = nats.ErrDisconnected
		}
		if err == nil {
			var f jetstream.PubAckFuture
			f, err = p.js.PublishMsgAsync(q.msg) // Nats-Msg-Id is in the header
			if err == nil {
				go p.await(f, q.lost)
				continue
			}
		}
		p.failed.Add(1)
		q.lost.Store(true)
		if time.Since(lastWarn) > 5*time.Second {
			lastWarn = time.Now()
			slog.Warn("natspub: publish failed; replicas will backfill the gap", "subject", q.msg.Subject, "err", err)
		}
	}
}

func (p *Publisher) await(f jetstream.PubAckFuture, lost *atomic.Bool) {
	select {
	case <-f.Ok():
		p.published.Add(1)
	case <-f.Err():
		p.failed.Add(1)
		lost.Store(true)
	}
}

func newEpoch() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// msgID makes a retried publish of the same message a duplicate JetStream drops.
func msgID(epoch string, res apis.Resource, seq uint64) string {
	return epoch + "." + res.GroupResource() + "." + strconv.FormatUint(seq, 10)
}
