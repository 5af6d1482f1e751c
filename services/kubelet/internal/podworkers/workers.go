package podworkers

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"podline.dev/pkg/clock"
	corev1 "podline.dev/proto/core/v1"
)

// UpdateType says why a pod is synced.
type UpdateType int

const (
	// Create is the first sync of a pod new to the kubelet.
	Create UpdateType = iota
	// Update: the pod changed in its source.
	Update
	// Sync: periodic, or the runtime or a probe asked.
	Sync
	// Kill: the pod must stop (removed from its source, or an orphan).
	Kill
)

func (t UpdateType) String() string {
	return [...]string{"create", "update", "sync", "kill"}[t]
}

// State is where a pod is in its lifecycle.
type State int

const (
	Syncing State = iota
	Terminating
	Terminated
	Finished
)

func (s State) String() string {
	return [...]string{"syncing", "terminating", "terminated", "finished"}[s]
}

// Syncer does the work of each state.
type Syncer interface {
	// SyncPod makes the pod run as its spec says. terminal reports that it
	// has finished for good (Succeeded, Failed, rejected); requeueAfter > 0
	// asks for another sync after that long.
	SyncPod(ctx context.Context, t UpdateType, pod *corev1.Pod) (terminal bool, requeueAfter time.Duration, err error)
	// SyncTerminatingPod stops the pod's containers within gracePeriod
	// (nil: the pod's own).
	SyncTerminatingPod(ctx context.Context, pod *corev1.Pod, gracePeriod *int64) error
	// SyncTerminatedPod releases what the pod held and, for a deleted pod,
	// completes its deletion.
	SyncTerminatedPod(ctx context.Context, pod *corev1.Pod) error
}

// Options tune timing.
type Options struct {
	// Resync is how often a running pod is synced with no cause (10 s).
	Resync time.Duration
	// RetryBase and RetryMax bound the delay after a failed step (1 s, 1 min).
	RetryBase, RetryMax time.Duration
}

// Workers runs the pod workers.
type Workers struct {
	syncer Syncer
	clock  clock.Clock
	log    *slog.Logger
	opts   Options
	ctx    context.Context

	mu      sync.Mutex
	workers map[string]*worker
	wg      sync.WaitGroup
}

type worker struct {
	uid   string
	pod   *corev1.Pod
	state State
	// next is the update type of the pending sync.
	next    UpdateType
	created bool // the Create sync has run
	grace   *int64
	removed bool // gone from its source
	wake    chan struct{}
	errors  int
	running bool
	deleted bool // SyncTerminatedPod ran for a pod with a deletion timestamp
}

// New returns Workers whose goroutines live until ctx ends.
func New(ctx context.Context, syncer Syncer, c clock.Clock, log *slog.Logger, opts Options) *Workers {
	if opts.Resync <= 0 {
		opts.Resync = 10 * time.Second
	}
	if opts.RetryBase <= 0 {
		opts.RetryBase = time.Second
	}
	if opts.RetryMax <= 0 {
		opts.RetryMax = time.Minute
	}
	return &Workers{syncer: syncer, clock: c, log: log, opts: opts, ctx: ctx, workers: map[string]*worker{}}
}

func minGrace(a, b *int64) *int64 {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case *b < *a:
		return b
	}
	return a
}

// UpdatePod hands a pod to its worker, starting one for a pod new to the
// kubelet. A pod with a deletion timestamp, or a Kill, moves a syncing
// worker to terminating; gracePeriod overrides the pod's for a Kill.
func (p *Workers) UpdatePod(pod *corev1.Pod, t UpdateType, gracePeriod *int64) {
	uid := pod.GetMetadata().GetUid()
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.workers[uid]
	if w == nil {
		w = &worker{uid: uid, wake: make(chan struct{}, 1), next: Create}
		p.workers[uid] = w
		if t == Kill || pod.GetMetadata().GetDeletionTimestamp() != nil {
			w.state = Terminating
			w.created = true
		}
	}
	w.pod = pod
	if t == Kill {
		w.removed = true
	}
	deleting := pod.GetMetadata().GetDeletionTimestamp() != nil
	if t == Kill || deleting {
		w.grace = minGrace(w.grace, minGrace(gracePeriod, pod.GetMetadata().DeletionGracePeriodSeconds))
		if w.state == Syncing {
			w.state = Terminating
		}
		if w.state == Finished && deleting && !w.deleted && !w.removed {
			// A finished pod deleted later: finish its deletion.
			w.state = Terminated
		}
	}
	if w.created && w.next != Kill && t != Create {
		w.next = t
	}
	p.start(w)
	p.signal(w)
}

// Trigger asks a pod's worker for a sync now (a container or a probe
// result changed).
func (p *Workers) Trigger(uid string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w := p.workers[uid]; w != nil && w.state != Finished {
		if w.created && w.next == Create {
			w.next = Sync
		}
		p.signal(w)
	}
}

func (p *Workers) signal(w *worker) {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// start runs w's goroutine unless it runs. Called with p.mu held.
func (p *Workers) start(w *worker) {
	if w.running || w.state == Finished {
		return
	}
	w.running = true
	p.wg.Go(func() { p.loop(w) })
}

// State is a pod's state, if it has a worker.
func (p *Workers) State(uid string) (State, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w := p.workers[uid]; w != nil {
		return w.state, true
	}
	return 0, false
}

// Active lists the pods still syncing (admission counts them).
func (p *Workers) Active() []*corev1.Pod {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*corev1.Pod
	for _, w := range p.workers {
		if w.state == Syncing {
			out = append(out, w.pod)
		}
	}
	return out
}

// Known lists the UIDs with a worker.
func (p *Workers) Known() map[string]State {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]State, len(p.workers))
	for uid, w := range p.workers {
		out[uid] = w.state
	}
	return out
}

// SyncKnownPods forgets finished workers of pods not in desired and
// terminates the unfinished ones (their pods vanished without a Kill).
func (p *Workers) SyncKnownPods(desired map[string]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for uid, w := range p.workers {
		if desired[uid] {
			continue
		}
		if w.state == Finished {
			delete(p.workers, uid)
			continue
		}
		if !w.removed {
			w.removed = true
			if w.state == Syncing {
				w.state = Terminating
			}
			p.start(w)
			p.signal(w)
		}
	}
}

// Wait waits for every worker goroutine to return (after ctx ended).
func (p *Workers) Wait() { p.wg.Wait() }

func (p *Workers) loop(w *worker) {
	var timer clock.Timer
	var timerC <-chan time.Time
	exited := false // running was cleared under the lock already
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		if !exited {
			p.mu.Lock()
			w.running = false
			p.mu.Unlock()
		}
	}()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-w.wake:
		case <-timerC:
		}
		if timer != nil {
			timer.Stop()
			timer, timerC = nil, nil
		}
		p.mu.Lock()
		pod, state, t, grace := w.pod, w.state, w.next, w.grace
		if state == Finished {
			w.running, exited = false, true
			p.mu.Unlock()
			return
		}
		w.next = Sync
		w.created = true
		p.mu.Unlock()

		var err error
		var delay time.Duration
		switch state {
		case Syncing:
			var terminal bool
			var requeue time.Duration
			terminal, requeue, err = p.syncer.SyncPod(p.ctx, t, pod)
			p.mu.Lock()
			if err == nil && terminal && w.state == Syncing {
				w.state = Terminating
				p.signal(w)
			}
			p.mu.Unlock()
			delay = p.opts.Resync
			if requeue > 0 && requeue < delay {
				delay = requeue
			}
		case Terminating:
			err = p.syncer.SyncTerminatingPod(p.ctx, pod, grace)
			if err == nil {
				p.transition(w, Terminating, Terminated)
			}
		case Terminated:
			err = p.syncer.SyncTerminatedPod(p.ctx, pod)
			if err == nil {
				p.mu.Lock()
				w.deleted = pod.GetMetadata().GetDeletionTimestamp() != nil
				p.mu.Unlock()
				p.transition(w, Terminated, Finished)
			}
		}
		if p.ctx.Err() != nil {
			return
		}
		p.mu.Lock()
		if err != nil {
			w.errors++
			delay = min(p.opts.RetryBase<<min(w.errors-1, 20), p.opts.RetryMax)
			p.log.Warn("pod sync failed", "pod", pod.GetMetadata().GetNamespace()+"/"+pod.GetMetadata().GetName(),
				"state", state, "err", err, "retry", delay)
		} else {
			w.errors = 0
		}
		if w.state == Finished {
			w.running, exited = false, true
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		if delay > 0 {
			timer = p.clock.NewTimer(delay)
			timerC = timer.C()
		}
	}
}

// transition moves w from one state to the next (unless it moved already)
// and wakes it for the next step.
func (p *Workers) transition(w *worker, from, to State) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.state == from {
		w.state = to
		if to != Finished {
			p.signal(w)
		}
	}
}
