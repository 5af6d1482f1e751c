package garbagecollector

import (
	"slices"
	"sync"

	"podline.dev/pkg/client/workqueue"
	"podline.dev/pkg/object"
	"podline.dev/proto/apis"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/controller-manager/internal/controller"
)

// Finalizers of the propagation policies, as the apiserver adds them.
const (
	FinalizerOrphan     = "orphan"
	FinalizerForeground = "foregroundDeletion"
)

// identity names an object of the graph.
type identity struct {
	APIVersion, Kind, Namespace, Name, UID string
}

func (id identity) String() string {
	return id.Kind + " " + object.KeyOf(id.Namespace, id.Name) + " (" + id.UID + ")"
}

// node is one object. Its fields are guarded by the graph's lock.
type node struct {
	identity identity
	owners   []*metav1.OwnerReference
	// dependents are the nodes with an ownerReference to this one.
	dependents map[*node]struct{}
	// beingDeleted: the object has a deletionTimestamp.
	beingDeleted bool
	// deletingDependents: it is being deleted in the foreground.
	deletingDependents bool
	// virtual: known only from a dependent's ownerReference so far.
	virtual bool
}

type eventType int

const (
	addEvent eventType = iota
	updateEvent
	deleteEvent
)

// event is a change the graph builder applies: from an informer, or a
// virtual delete from a worker that found an object gone.
type event struct {
	typ     eventType
	obj     object.Object
	old     object.Object
	res     apis.Resource
	virtual bool
	id      identity // for virtual deletes
}

// graph is the ownership graph and the queues its changes feed.
type graph struct {
	mu        sync.RWMutex
	uidToNode map[string]*node
	absent    *absentCache

	attemptToDelete workqueue.RateLimitingInterface[*node]
	attemptToOrphan workqueue.RateLimitingInterface[*node]
}

func newGraph(toDelete, toOrphan workqueue.RateLimitingInterface[*node]) *graph {
	return &graph{uidToNode: map[string]*node{}, absent: newAbsentCache(10000),
		attemptToDelete: toDelete, attemptToOrphan: toOrphan}
}

func identityOf(obj object.Object, res apis.Resource) identity {
	md := obj.GetMetadata()
	return identity{APIVersion: res.Group.GroupVersion(), Kind: res.Kind, Namespace: md.GetNamespace(), Name: md.GetName(), UID: md.GetUid()}
}

// ownerIdentity is where an ownerReference of a dependent in namespace
// points: owners of namespaced kinds live in the dependent's namespace.
func ownerIdentity(ref *metav1.OwnerReference, namespace string) identity {
	id := identity{APIVersion: ref.GetApiVersion(), Kind: ref.GetKind(), Name: ref.GetName(), UID: ref.GetUid()}
	if k, ok := controller.KindFor(ref.GetApiVersion(), ref.GetKind()); !ok || k.Resource.Namespaced {
		id.Namespace = namespace
	}
	return id
}

func beingDeleted(obj object.Object) bool { return obj.GetMetadata().GetDeletionTimestamp() != nil }

func hasFinalizer(obj object.Object, f string) bool {
	return slices.Contains(obj.GetMetadata().GetFinalizers(), f)
}

// deletionStartsWith: obj is now being deleted with finalizer f, and old was not.
func deletionStartsWith(old, obj object.Object, f string) bool {
	if !beingDeleted(obj) || !hasFinalizer(obj, f) {
		return false
	}
	return old == nil || !beingDeleted(old) || !hasFinalizer(old, f)
}

// process applies one change to the graph.
func (g *graph) process(ev *event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var id identity
	if ev.virtual {
		id = ev.id
	} else {
		id = identityOf(ev.obj, ev.res)
	}
	existing, found := g.uidToNode[id.UID]
	if found && !ev.virtual && existing.virtual {
		existing.virtual = false // observed at last
		existing.identity = id
	}
	switch {
	case (ev.typ == addEvent || ev.typ == updateEvent) && !found:
		n := &node{
			identity:           id,
			owners:             ev.obj.GetMetadata().GetOwnerReferences(),
			dependents:         map[*node]struct{}{},
			beingDeleted:       beingDeleted(ev.obj),
			deletingDependents: beingDeleted(ev.obj) && hasFinalizer(ev.obj, FinalizerForeground),
		}
		g.uidToNode[id.UID] = n
		g.addDependentToOwners(n, n.owners)
		g.processTransitions(ev.old, ev.obj, n)
	case ev.typ == addEvent || ev.typ == updateEvent:
		added, removed, changed := referencesDiffs(existing.owners, ev.obj.GetMetadata().GetOwnerReferences())
		if len(added)+len(removed)+len(changed) > 0 {
			g.addUnblockedOwnersToDeleteQueue(removed, changed)
			existing.owners = ev.obj.GetMetadata().GetOwnerReferences()
			g.addDependentToOwners(existing, added)
			g.removeDependentFromOwners(existing, removed)
		}
		if beingDeleted(ev.obj) {
			existing.beingDeleted = true
		}
		g.processTransitions(ev.old, ev.obj, existing)
	case ev.typ == deleteEvent:
		if !found {
			return
		}
		if ev.virtual && existing.identity.UID != id.UID {
			return
		}
		g.removeNode(existing)
		if len(existing.dependents) > 0 {
			g.absent.add(id.UID)
		}
		for dep := range existing.dependents {
			g.attemptToDelete.Add(dep)
		}
		for _, ref := range existing.owners {
			if owner, ok := g.uidToNode[ref.GetUid()]; ok && owner.deletingDependents {
				g.attemptToDelete.Add(owner) // it may be free to go now
			}
		}
	}
}

func (g *graph) processTransitions(old, obj object.Object, n *node) {
	if deletionStartsWith(old, obj, FinalizerOrphan) {
		g.attemptToOrphan.Add(n)
		return
	}
	if deletionStartsWith(old, obj, FinalizerForeground) {
		n.deletingDependents = true
		n.beingDeleted = true
		for dep := range n.dependents {
			g.attemptToDelete.Add(dep)
		}
		g.attemptToDelete.Add(n)
	}
}

// addDependentToOwners links n to its owners, making virtual nodes for
// owners not seen yet and asking the collector to check they exist.
func (g *graph) addDependentToOwners(n *node, refs []*metav1.OwnerReference) {
	for _, ref := range refs {
		owner, ok := g.uidToNode[ref.GetUid()]
		if !ok {
			owner = &node{identity: ownerIdentity(ref, n.identity.Namespace), dependents: map[*node]struct{}{}, virtual: true}
			g.uidToNode[ref.GetUid()] = owner
			g.attemptToDelete.Add(owner)
		}
		owner.dependents[n] = struct{}{}
	}
}

func (g *graph) removeDependentFromOwners(n *node, refs []*metav1.OwnerReference) {
	for _, ref := range refs {
		if owner, ok := g.uidToNode[ref.GetUid()]; ok {
			delete(owner.dependents, n)
		}
	}
}

func (g *graph) removeNode(n *node) {
	delete(g.uidToNode, n.identity.UID)
	g.removeDependentFromOwners(n, n.owners)
}

// addUnblockedOwnersToDeleteQueue wakes owners in foreground deletion that a
// removed or no-longer-blocking reference may have freed.
func (g *graph) addUnblockedOwnersToDeleteQueue(removed []*metav1.OwnerReference, changed []refChange) {
	for _, ref := range removed {
		if ref.GetBlockOwnerDeletion() {
			if owner, ok := g.uidToNode[ref.GetUid()]; ok && owner.deletingDependents {
				g.attemptToDelete.Add(owner)
			}
		}
	}
	for _, c := range changed {
		if c.old.GetBlockOwnerDeletion() && !c.new.GetBlockOwnerDeletion() {
			if owner, ok := g.uidToNode[c.new.GetUid()]; ok && owner.deletingDependents {
				g.attemptToDelete.Add(owner)
			}
		}
	}
}

type refChange struct{ old, new *metav1.OwnerReference }

func referencesDiffs(old, cur []*metav1.OwnerReference) (added, removed []*metav1.OwnerReference, changed []refChange) {
	oldByUID := map[string]*metav1.OwnerReference{}
	for _, r := range old {
		oldByUID[r.GetUid()] = r
	}
	for _, r := range cur {
		if o, ok := oldByUID[r.GetUid()]; ok {
			if o.GetBlockOwnerDeletion() != r.GetBlockOwnerDeletion() || o.GetController() != r.GetController() {
				changed = append(changed, refChange{old: o, new: r})
			}
			delete(oldByUID, r.GetUid())
		} else {
			added = append(added, r)
		}
	}
	for _, r := range old {
		if _, ok := oldByUID[r.GetUid()]; ok {
			removed = append(removed, r)
		}
	}
	return added, removed, changed
}

// ----------------------------------------------------- reads by workers

// snapshot is a node's state read under the lock.
type snapshot struct {
	identity           identity
	beingDeleted       bool
	deletingDependents bool
	virtual            bool
	dependents         []*node
}

func (g *graph) snapshot(n *node) snapshot {
	g.mu.RLock()
	defer g.mu.RUnlock()
	s := snapshot{identity: n.identity, beingDeleted: n.beingDeleted, deletingDependents: n.deletingDependents, virtual: n.virtual}
	for d := range n.dependents {
		s.dependents = append(s.dependents, d)
	}
	return s
}

// blockingDependents are n's dependents whose reference to n has
// blockOwnerDeletion.
func (g *graph) blockingDependents(n *node) []*node {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []*node
	for dep := range n.dependents {
		for _, ref := range dep.owners {
			if ref.GetUid() == n.identity.UID && ref.GetBlockOwnerDeletion() {
				out = append(out, dep)
				break
			}
		}
	}
	return out
}

func (g *graph) isDeletingDependents(n *node) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return n.deletingDependents
}

func (g *graph) node(uid string) (*node, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	n, ok := g.uidToNode[uid]
	return n, ok
}

// absentCache remembers owners known not to exist, to spare GETs when many
// dependents of one deleted owner are collected.
type absentCache struct {
	mu    sync.Mutex
	max   int
	items map[string]struct{}
}

func newAbsentCache(max int) *absentCache {
	return &absentCache{max: max, items: map[string]struct{}{}}
}

func (c *absentCache) add(uid string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.items) >= c.max {
		clear(c.items)
	}
	c.items[uid] = struct{}{}
}

func (c *absentCache) has(uid string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.items[uid]
	return ok
}
