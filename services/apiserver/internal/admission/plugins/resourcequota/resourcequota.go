// Package resourcequota is Kubernetes' ResourceQuota admission. A create in
// a namespace with ResourceQuota objects is charged to each quota whose
// spec.hard names a resource the object uses: a pod's count and its CPU
// and memory requests and limits (pkg/quota.PodUsage), or the object's
// count (count/<resource>[.<group>], and the bare name of the core kinds
// Kubernetes counts that way, such as "configmaps"). It is refused with
// 403 "exceeded quota" when the quota's status.used plus the charge
// would pass spec.hard, and "failed quota" when a quota tracks a compute
// resource one of the pod's containers does not set.
//
// Quotas are found in the watch cache; for a pod, a namespace whose cache
// holds none is looked up in storage too, so a quota created a moment ago
// applies to the next pod, as in Kubernetes. As there, a lookup that found
// none is believed for LiveLookupTTL, so that pod creates in a namespace
// without quotas cost no storage read each: a quota made in that time
// counts once the watch cache has it, a moment later.
//
// Charging is a write of the quota's status (status.hard = spec.hard,
// status.used raised by the charge) with the quota's resourceVersion as
// precondition, made before the object is stored, as Kubernetes does. The
// plugin charges one namespace at a time in this apiserver and reads the
// quotas from storage when it does, so concurrent creates queue rather
// than conflict; a conflict (another apiserver, or the resourcequota
// controller recomputing status.used) re-reads the quotas that failed and
// tries again, three times, after which the create fails with that
// Conflict. Two concurrent creates can therefore not both fit where only
// one does. A create that fails after it was charged leaves status.used
// too high until the controller recomputes it (on its full resync, or
// when a pod of the namespace goes away), as in Kubernetes.
//
// Two differences from Kubernetes: the limits come from spec.hard, so a
// quota applies to the next create at once, before the controller has
// filled status.hard; and where status.used lacks a pod resource the
// quota tracks (the controller has not synced it yet), the plugin
// computes it from the namespace's pods in storage instead of refusing
// with "status unknown for quota", which it still answers for object
// counts of other kinds. Scopes and scope selectors are not evaluated: a
// quota counts every pod of its namespace. Dry-run creates are checked
// but not charged.
package resourcequota

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/object"
	"podline.dev/pkg/quota"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/internal/admission"
)

// Name is the plugin's name in spans.
const Name = "ResourceQuota"

// Retries is how many times a charge that conflicted is tried again, as
// Kubernetes' quota evaluator does.
const Retries = 3

// StatusWriter writes a quota's status, failing with a Conflict when the
// quota's resourceVersion is no longer the stored one.
type StatusWriter interface {
	UpdateStatus(ctx context.Context, q *corev1.ResourceQuota) error
}

// LiveLookupTTL is how long a storage lookup that found no quota in a
// namespace stands in for another (Kubernetes' quota admission: 30 s).
const LiveLookupTTL = 30 * time.Second

// Sources are what the plugin reads and writes.
type Sources struct {
	// Quotas lists a namespace's quotas from a cache; it tells the plugin
	// whether a create needs charging at all.
	Quotas admission.Lister
	// LiveQuotas lists them from storage: what a charge is computed from.
	LiveQuotas admission.Lister
	// Pods lists a namespace's pods from storage, for a quota whose
	// status.used lacks a pod resource.
	Pods admission.Lister
	// Status writes the charged quotas.
	Status StatusWriter
	// Now is the time pods are judged at (stuck terminating); nil is time.Now.
	Now func() time.Time
}

// Plugin charges creates to their namespace's quotas.
type Plugin struct {
	src   Sources
	locks namespaceLocks
	none  noQuotaLookups
}

var _ admission.Validator = (*Plugin)(nil)

// New returns the plugin over src.
func New(src Sources) *Plugin {
	if src.Now == nil {
		src.Now = time.Now
	}
	return &Plugin{src: src}
}

// Name implements admission.Validator.
func (*Plugin) Name() string { return Name }

// Validate implements admission.Validator.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Operation != admission.Create || a.Subresource != "" || a.Namespace == "" {
		return nil
	}
	c := newCharge(a)
	cached, err := p.src.Quotas.List(ctx, a.Namespace)
	if now := p.src.Now(); err == nil && len(cached) == 0 && c.pod != nil && !p.none.holds(a.Namespace, now) {
		// A quota created a moment ago applies to the next pod, as in
		// Kubernetes, which looks quotas up live when its cache has none.
		// Object counts need the status the controller fills in, by which
		// time the cache has the quota.
		if cached, err = p.src.LiveQuotas.List(ctx, a.Namespace); err == nil && len(cached) == 0 {
			p.none.remember(a.Namespace, now.Add(LiveLookupTTL))
		}
	}
	if err != nil || !c.concerns(cached) {
		return err
	}
	unlock := p.locks.lock(a.Namespace)
	defer unlock()
	quotas, err := p.src.LiveQuotas.List(ctx, a.Namespace)
	if err != nil {
		return err
	}
	var lastErr error
	for range Retries + 1 {
		changed, err := p.check(ctx, c, quotas)
		if err != nil || a.DryRun {
			return err
		}
		var failed []string
		for _, q := range changed {
			switch err := p.src.Status.UpdateStatus(ctx, q); {
			case apierrors.IsConflict(err):
				failed = append(failed, q.GetMetadata().GetName())
				lastErr = err
			case err != nil:
				return err
			}
		}
		if len(failed) == 0 {
			return nil
		}
		if quotas, err = p.reread(ctx, a.Namespace, failed); err != nil {
			return err
		}
	}
	return lastErr
}

// reread lists the namespace's quotas again, keeping those named.
func (p *Plugin) reread(ctx context.Context, namespace string, names []string) ([]object.Object, error) {
	all, err := p.src.LiveQuotas.List(ctx, namespace)
	if err != nil {
		return nil, err
	}
	var out []object.Object
	for _, o := range all {
		if slices.Contains(names, o.GetMetadata().GetName()) {
			out = append(out, o)
		}
	}
	return out, nil
}

// charge is what one create asks of its namespace's quotas.
type charge struct {
	a *admission.Attributes
	// pod is set when the object is a pod.
	pod *corev1.Pod
	// requested is the object's usage under every name it answers to.
	requested quota.Usage
}

func newCharge(a *admission.Attributes) *charge {
	c := &charge{a: a}
	if pod, ok := a.Object.(*corev1.Pod); ok && a.Is("", "Pod") {
		c.pod = pod
		c.requested = quota.PodUsage(pod)
		return c
	}
	c.requested = quota.CountUsage(a.Resource.Group.Name, a.Resource.Name, 1)
	return c
}

// matching are the names in hard this create is measured under.
func (c *charge) matching(hard map[string]string) []string {
	var out []string
	for name := range hard {
		if _, ok := c.requested[name]; ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// concerns reports whether some quota tracks what the create uses.
func (c *charge) concerns(quotas []object.Object) bool {
	for _, o := range quotas {
		if len(c.matching(o.(*corev1.ResourceQuota).GetSpec().GetHard())) > 0 {
			return true
		}
	}
	return false
}

// check measures the create against each quota and returns the quotas
// with the charge added to their status, ready to be written.
func (p *Plugin) check(ctx context.Context, c *charge, quotas []object.Object) ([]*corev1.ResourceQuota, error) {
	var (
		out     []*corev1.ResourceQuota
		podsNow quota.Usage
	)
	for _, o := range quotas {
		q := o.(*corev1.ResourceQuota)
		hard := q.GetSpec().GetHard()
		names := c.matching(hard)
		if len(names) == 0 {
			continue
		}
		if msg := failedQuota(q, c.pod, names); msg != "" {
			return nil, c.a.Forbidden(msg)
		}
		used := quota.Parse(q.GetStatus().GetUsed())
		var unknown []string
		for _, n := range names {
			if _, ok := used[n]; !ok {
				unknown = append(unknown, n)
			}
		}
		if len(unknown) > 0 {
			if c.pod == nil {
				return nil, c.a.Forbidden(fmt.Sprintf("status unknown for quota: %s, resources: %s",
					q.GetMetadata().GetName(), strings.Join(unknown, ",")))
			}
			if podsNow == nil {
				var err error
				if podsNow, err = p.podsUsage(ctx, c); err != nil {
					return nil, err
				}
			}
			for _, n := range unknown {
				used[n] = podsNow[n]
			}
		}
		limits := quota.Parse(hard)
		var over []string
		for _, n := range names {
			if c.requested[n] > 0 && used[n]+c.requested[n] > limits[n] {
				over = append(over, n)
			}
		}
		if len(over) > 0 {
			return nil, c.a.Forbidden(fmt.Sprintf("exceeded quota: %s, requested: %s, used: %s, limited: %s",
				q.GetMetadata().GetName(), list(over, c.requested), list(over, used), list(over, limits)))
		}
		next := charged(q, used.Mask(names), c.requested.Mask(names))
		if quota.Equal(next.Status.Used, q.GetStatus().GetUsed()) && quota.Equal(next.Status.Hard, q.GetStatus().GetHard()) {
			continue
		}
		out = append(out, next)
	}
	return out, nil
}

// charged is q with status.hard = spec.hard and status.used = used plus
// the charge, keeping q's resourceVersion as the write's precondition.
func charged(q *corev1.ResourceQuota, used, charge quota.Usage) *corev1.ResourceQuota {
	next := object.Copy(q)
	u := maps.Clone(used)
	u.Add(charge)
	out := maps.Clone(q.GetStatus().GetUsed())
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, u.Strings())
	hard := maps.Clone(q.GetSpec().GetHard())
	next.Status = &corev1.ResourceQuotaStatus{Hard: hard, Used: out}
	return next
}

// podsUsage sums what the namespace's pods use, leaving out the pod being
// created (a retried create).
func (p *Plugin) podsUsage(ctx context.Context, c *charge) (quota.Usage, error) {
	objs, err := p.src.Pods.List(ctx, c.a.Namespace)
	if err != nil {
		return nil, err
	}
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if o.GetMetadata().GetName() != c.pod.GetMetadata().GetName() {
			pods = append(pods, o.(*corev1.Pod))
		}
	}
	return quota.PodsUsage(pods, p.src.Now()), nil
}

func failedQuota(q *corev1.ResourceQuota, pod *corev1.Pod, names []string) string {
	if pod == nil {
		return ""
	}
	var parts []string
	for _, name := range names {
		if missing := quota.Missing(pod, name); len(missing) > 0 {
			parts = append(parts, fmt.Sprintf("%s for: %s", name, strings.Join(missing, ",")))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("failed quota: %s: must specify %s", q.GetMetadata().GetName(), strings.Join(parts, "; "))
}

// list renders "pods=1,requests.cpu=500m" for the named resources.
func list(names []string, u quota.Usage) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + quota.Format(n, u[n])
	}
	return strings.Join(parts, ",")
}

// noQuotaLookups remembers, per namespace, until when a storage lookup
// that found no quota stands.
type noQuotaLookups struct {
	mu    sync.Mutex
	until map[string]time.Time
}

// noQuotaKeep bounds the namespaces remembered; past it, lapsed ones go.
const noQuotaKeep = 1024

func (l *noQuotaLookups) holds(namespace string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return now.Before(l.until[namespace])
}

func (l *noQuotaLookups) remember(namespace string, until time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.until == nil {
		l.until = map[string]time.Time{}
	}
	if len(l.until) >= noQuotaKeep {
		now := until.Add(-LiveLookupTTL)
		maps.DeleteFunc(l.until, func(_ string, t time.Time) bool { return !now.Before(t) })
	}
	l.until[namespace] = until
}

// namespaceLocks serialise the charges of one namespace.
type namespaceLocks struct {
	mu    sync.Mutex
	locks map[string]*namespaceLock
}

type namespaceLock struct {
	mu   sync.Mutex
	refs int
}

// lock takes namespace's lock and returns its release.
func (l *namespaceLocks) lock(namespace string) func() {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*namespaceLock{}
	}
	nl := l.locks[namespace]
	if nl == nil {
		nl = &namespaceLock{}
		l.locks[namespace] = nl
	}
	nl.refs++
	l.mu.Unlock()
	nl.mu.Lock()
	return func() {
		nl.mu.Unlock()
		l.mu.Lock()
		if nl.refs--; nl.refs == 0 {
			delete(l.locks, namespace)
		}
		l.mu.Unlock()
	}
}
