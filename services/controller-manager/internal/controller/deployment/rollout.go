package deployment

import (
	"fmt"
	"maps"
	"math"
	"sort"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/object"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/controller-manager/internal/controller"
)

// The rollout core: a pure function from what the controller sees (a
// deployment, the ReplicaSets it owns, their pods, the time) to the writes
// one sync makes, in order. It is Kubernetes' deployment sync (sync.go,
// rolling.go, recreate.go, progress.go) with each API call replaced by a
// Write in the plan and a change to the planner's working copies, so that
// later steps of the same sync see earlier ones, as they do in Kubernetes.
// The controller executes the plan and stops at the first failed write;
// the next sync starts again from what the informers show.

// Input is what one sync of a deployment looks at. It is not changed.
type Input struct {
	Deployment *appsv1.Deployment
	// ReplicaSets are the ReplicaSets the deployment owns (after adoption).
	ReplicaSets []*appsv1.ReplicaSet
	// PodsByReplicaSet maps ReplicaSet UIDs to their pods; only the
	// Recreate strategy looks at it.
	PodsByReplicaSet map[string][]*corev1.Pod
	Now              time.Time
}

// WriteKind is the kind of a write.
type WriteKind int

const (
	CreateReplicaSet WriteKind = iota + 1
	UpdateReplicaSet
	DeleteReplicaSet
	UpdateDeploymentStatus
)

// Event is an event about the deployment.
type Event struct{ Type, Reason, Message string }

// Write is one write to the apiserver, with the events to record when it succeeds.
type Write struct {
	Kind       WriteKind
	ReplicaSet *appsv1.ReplicaSet
	Deployment *appsv1.Deployment
	Events     []Event
}

func (w Write) String() string {
	switch w.Kind {
	case CreateReplicaSet:
		return fmt.Sprintf("create %s replicas=%d", w.ReplicaSet.GetMetadata().GetName(), rsReplicas(w.ReplicaSet))
	case UpdateReplicaSet:
		return fmt.Sprintf("update %s replicas=%d", w.ReplicaSet.GetMetadata().GetName(), rsReplicas(w.ReplicaSet))
	case DeleteReplicaSet:
		return "delete " + w.ReplicaSet.GetMetadata().GetName()
	case UpdateDeploymentStatus:
		return "update-status " + w.Deployment.GetMetadata().GetName()
	}
	return "?"
}

// Plan is the result of one sync.
type Plan struct {
	Writes []Write
	// Events are recorded whatever the writes do.
	Events []Event
	// RequeueAfter, when positive, asks for another sync after that long
	// (to notice a progress deadline passing).
	RequeueAfter time.Duration
}

type planner struct {
	orig   *appsv1.Deployment
	d      *appsv1.Deployment // working copy: status and annotations change
	rsList []*appsv1.ReplicaSet
	pods   map[string][]*corev1.Pod
	now    time.Time
	plan   Plan
}

// Sync plans one sync of in.Deployment.
func Sync(in Input) Plan {
	p := &planner{
		orig: in.Deployment,
		d:    object.Copy(in.Deployment),
		pods: in.PodsByReplicaSet,
		now:  in.Now,
	}
	if p.d.Status == nil {
		p.d.Status = &appsv1.DeploymentStatus{}
	}
	if p.d.Metadata.Annotations == nil {
		p.d.Metadata.Annotations = map[string]string{}
	}
	for _, rs := range in.ReplicaSets {
		p.rsList = append(p.rsList, object.Copy(rs))
	}
	p.syncDeployment()
	if !proto.Equal(p.d.GetStatus(), p.orig.GetStatus()) || !maps.Equal(p.d.GetMetadata().GetAnnotations(), p.orig.GetMetadata().GetAnnotations()) {
		p.plan.Writes = append(p.plan.Writes, Write{Kind: UpdateDeploymentStatus, Deployment: object.Copy(p.d)})
	}
	return p.plan
}

func (p *planner) event(typ, reason, format string, args ...any) Event {
	return Event{Type: typ, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// updateRS records an update of rs (a working copy), merging it with the
// previous write when that was an update of the same ReplicaSet.
func (p *planner) updateRS(rs *appsv1.ReplicaSet, events ...Event) {
	if n := len(p.plan.Writes); n > 0 {
		last := &p.plan.Writes[n-1]
		if (last.Kind == UpdateReplicaSet || last.Kind == CreateReplicaSet) && last.ReplicaSet.GetMetadata().GetName() == rs.GetMetadata().GetName() {
			last.ReplicaSet = object.Copy(rs)
			last.Events = append(last.Events, events...)
			return
		}
	}
	p.plan.Writes = append(p.plan.Writes, Write{Kind: UpdateReplicaSet, ReplicaSet: object.Copy(rs), Events: events})
}

func (p *planner) syncDeployment() {
	d := p.d
	sel := d.GetSpec().GetSelector()
	if len(sel.GetMatchLabels()) == 0 && len(sel.GetMatchExpressions()) == 0 {
		p.plan.Events = append(p.plan.Events, p.event(controller.EventTypeWarning, "SelectingAll",
			"This deployment is selecting all pods. A non-empty selector is required."))
		if d.Status.ObservedGeneration < d.Metadata.Generation {
			d.Status.ObservedGeneration = d.Metadata.Generation
		}
		return
	}
	if d.GetMetadata().GetDeletionTimestamp() != nil {
		p.syncStatusOnly()
		return
	}
	p.checkPausedConditions()
	if d.GetSpec().GetPaused() {
		p.sync()
		return
	}
	if p.isScalingEvent() {
		p.sync()
		return
	}
	if IsRollingUpdate(d) {
		p.rolloutRolling()
	} else {
		p.rolloutRecreate()
	}
}

// ------------------------------------------------------- new and old RS

func (p *planner) getAllReplicaSetsAndSyncRevision(create bool) (*appsv1.ReplicaSet, []*appsv1.ReplicaSet) {
	old := FindOldReplicaSets(p.d, p.rsList)
	return p.getNewReplicaSet(old, create), old
}

func (p *planner) getNewReplicaSet(oldRSs []*appsv1.ReplicaSet, create bool) *appsv1.ReplicaSet {
	d := p.d
	existing := FindNewReplicaSet(d, p.rsList)
	newRevision := strconv.FormatInt(MaxRevision(oldRSs)+1, 10)
	if existing != nil {
		annotationsUpdated := setNewReplicaSetAnnotations(d, existing, newRevision, true)
		minReadyNeedsUpdate := existing.GetSpec().GetMinReadySeconds() != d.GetSpec().GetMinReadySeconds()
		if annotationsUpdated || minReadyNeedsUpdate {
			existing.Spec.MinReadySeconds = d.GetSpec().GetMinReadySeconds()
			p.updateRS(existing)
		}
		setDeploymentRevision(d, existing.GetMetadata().GetAnnotations()[RevisionAnnotation])
		if HasProgressDeadline(d) && getCondition(d.Status, ConditionProgressing) == nil {
			setCondition(d.Status, newCondition(ConditionProgressing, controller.ConditionTrue, ReasonFoundNewReplicaSet,
				fmt.Sprintf("Found new replica set %q", existing.GetMetadata().GetName()), p.now))
		}
		return existing
	}
	if !create {
		return nil
	}
	template := proto.Clone(d.GetSpec().GetTemplate()).(*corev1.PodTemplateSpec)
	hash := ComputeHash(template, d.Status.CollisionCount)
	if template.Metadata == nil {
		template.Metadata = &metav1.ObjectMeta{}
	}
	template.Metadata.Labels = cloneWith(template.Metadata.Labels, PodTemplateHashLabel, hash)
	selector := proto.Clone(d.GetSpec().GetSelector()).(*metav1.LabelSelector)
	selector.MatchLabels = cloneWith(selector.MatchLabels, PodTemplateHashLabel, hash)
	newRS := &appsv1.ReplicaSet{
		ApiVersion: "apps/v1", Kind: "ReplicaSet",
		Metadata: &metav1.ObjectMeta{
			Name:            d.Metadata.Name + "-" + hash,
			Namespace:       d.Metadata.Namespace,
			OwnerReferences: []*metav1.OwnerReference{controller.NewControllerRef(d, controller.ResourceOf[*appsv1.Deployment]())},
			Labels:          maps.Clone(template.Metadata.Labels),
		},
		Spec: &appsv1.ReplicaSetSpec{
			Replicas:        proto.Int32(0),
			MinReadySeconds: d.GetSpec().GetMinReadySeconds(),
			Selector:        selector,
			Template:        template,
		},
		Status: &appsv1.ReplicaSetStatus{},
	}
	all := append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS)
	count := NewRSNewReplicas(d, all, newRS)
	setRSReplicas(newRS, count)
	setNewReplicaSetAnnotations(d, newRS, newRevision, false)
	w := Write{Kind: CreateReplicaSet, ReplicaSet: object.Copy(newRS)}
	if count > 0 {
		w.Events = []Event{p.event(controller.EventTypeNormal, "ScalingReplicaSet", "Scaled up replica set %s from 0 to %d", newRS.Metadata.Name, count)}
	}
	p.plan.Writes = append(p.plan.Writes, w)
	p.rsList = append(p.rsList, newRS)
	setDeploymentRevision(d, newRevision)
	if HasProgressDeadline(d) {
		setCondition(d.Status, newCondition(ConditionProgressing, controller.ConditionTrue, ReasonNewReplicaSet,
			fmt.Sprintf("Created new replica set %q", newRS.Metadata.Name), p.now))
	}
	return newRS
}

func cloneWith(m map[string]string, k, v string) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	out[k] = v
	return out
}

// NewRSNewReplicas is the size the new ReplicaSet may grow to now.
func NewRSNewReplicas(d *appsv1.Deployment, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) int32 {
	if !IsRollingUpdate(d) {
		return Replicas(d)
	}
	maxTotal := Replicas(d) + MaxSurge(d)
	current := ReplicaCount(allRSs)
	if current >= maxTotal {
		return rsReplicas(newRS)
	}
	up := min(maxTotal-current, Replicas(d)-rsReplicas(newRS))
	return rsReplicas(newRS) + up
}

// ------------------------------------------------------------- scaling

// scaleReplicaSet sets rs to newScale (and its replicas annotations) and
// reports whether its size changed.
func (p *planner) scaleReplicaSet(rs *appsv1.ReplicaSet, newScale int32) bool {
	d := p.d
	sizeChange := rsReplicas(rs) != newScale
	annotations := replicasAnnotationsNeedUpdate(rs, Replicas(d), Replicas(d)+MaxSurge(d))
	if !sizeChange && !annotations {
		return false
	}
	old := rsReplicas(rs)
	setRSReplicas(rs, newScale)
	if rs.Metadata == nil {
		rs.Metadata = &metav1.ObjectMeta{}
	}
	setReplicasAnnotations(rs, Replicas(d), Replicas(d)+MaxSurge(d))
	var events []Event
	if sizeChange {
		op := "down"
		if old < newScale {
			op = "up"
		}
		events = append(events, p.event(controller.EventTypeNormal, "ScalingReplicaSet", "Scaled %s replica set %s from %d to %d", op, rs.Metadata.Name, old, newScale))
	}
	p.updateRS(rs, events...)
	return sizeChange
}

// scaleAndRecord is scaleReplicaSet that does nothing when the size is right.
func (p *planner) scaleAndRecord(rs *appsv1.ReplicaSet, newScale int32) bool {
	if rsReplicas(rs) == newScale {
		return false
	}
	return p.scaleReplicaSet(rs, newScale)
}

func (p *planner) isScalingEvent() bool {
	newRS, oldRSs := p.getAllReplicaSetsAndSyncRevision(false)
	for _, rs := range FilterActive(append(oldRSs, newRS)) {
		desired, ok := intAnnotation(rs, DesiredReplicasAnnotation)
		if ok && desired != Replicas(p.d) {
			return true
		}
	}
	return false
}

// sync is the path of a paused deployment or a scaling event: resize what
// exists without rolling anything out.
func (p *planner) sync() {
	newRS, oldRSs := p.getAllReplicaSetsAndSyncRevision(false)
	p.scale(newRS, oldRSs)
	if p.d.GetSpec().GetPaused() {
		p.cleanupDeployment(oldRSs)
	}
	p.syncDeploymentStatus(append(oldRSs, newRS), newRS)
}

func (p *planner) scale(newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) {
	d := p.d
	if rs := findActiveOrLatest(newRS, oldRSs); rs != nil {
		if rsReplicas(rs) != Replicas(d) {
			p.scaleAndRecord(rs, Replicas(d))
		}
		return
	}
	if isSaturated(d, newRS) {
		for _, old := range FilterActive(oldRSs) {
			p.scaleAndRecord(old, 0)
		}
		return
	}
	if !IsRollingUpdate(d) {
		return
	}
	all := FilterActive(append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS))
	allReplicas := ReplicaCount(all)
	allowed := int32(0)
	if Replicas(d) > 0 {
		allowed = Replicas(d) + MaxSurge(d)
	}
	toAdd := allowed - allReplicas
	switch {
	case toAdd > 0:
		sort.SliceStable(all, bySizeNewer(all))
	case toAdd < 0:
		sort.SliceStable(all, bySizeOlder(all))
	}
	added := int32(0)
	sizes := make([]int32, len(all))
	for i, rs := range all {
		if toAdd != 0 {
			prop := p.proportion(rs, toAdd, added)
			sizes[i] = rsReplicas(rs) + prop
			added += prop
		} else {
			sizes[i] = rsReplicas(rs)
		}
	}
	for i, rs := range all {
		if i == 0 && toAdd != 0 {
			sizes[i] += toAdd - added
			if sizes[i] < 0 {
				sizes[i] = 0
			}
		}
		p.scaleReplicaSet(rs, sizes[i])
	}
}

// proportion is rs's share of toAdd replicas, of which added are given out.
func (p *planner) proportion(rs *appsv1.ReplicaSet, toAdd, added int32) int32 {
	if rs == nil || rsReplicas(rs) == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	fraction := p.fraction(rs)
	allowed := toAdd - added
	if toAdd > 0 {
		return min(fraction, allowed)
	}
	return max(fraction, allowed)
}

func (p *planner) fraction(rs *appsv1.ReplicaSet) int32 {
	d := p.d
	if Replicas(d) == 0 {
		return -rsReplicas(rs)
	}
	maxReplicas := Replicas(d) + MaxSurge(d)
	before, ok := intAnnotation(rs, MaxReplicasAnnotation)
	if !ok || before == 0 {
		before = d.GetStatus().GetReplicas()
		if before == 0 {
			return 0
		}
	}
	size := float64(rsReplicas(rs)*maxReplicas) / float64(before)
	return int32(math.Round(size)) - rsReplicas(rs)
}

func findActiveOrLatest(newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	if len(oldRSs) == 0 && newRS == nil {
		return nil
	}
	sorted := append([]*appsv1.ReplicaSet(nil), oldRSs...)
	sort.SliceStable(sorted, func(i, j int) bool { return byCreation(sorted)(j, i) }) // newest first
	active := FilterActive(append(append([]*appsv1.ReplicaSet(nil), sorted...), newRS))
	switch len(active) {
	case 0:
		if newRS != nil {
			return newRS
		}
		return sorted[0]
	case 1:
		return active[0]
	}
	return nil
}

func isSaturated(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	if rs == nil {
		return false
	}
	desired, ok := intAnnotation(rs, DesiredReplicasAnnotation)
	return ok && desired == Replicas(d) && rsReplicas(rs) == Replicas(d) && rs.GetStatus().GetAvailableReplicas() == Replicas(d)
}

// ------------------------------------------------------ rolling update

func (p *planner) rolloutRolling() {
	newRS, oldRSs := p.getAllReplicaSetsAndSyncRevision(true)
	all := append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS)
	if p.reconcileNewReplicaSet(all, newRS) {
		p.syncRolloutStatus(all, newRS)
		return
	}
	if p.reconcileOldReplicaSets(all, FilterActive(oldRSs), newRS) {
		p.syncRolloutStatus(all, newRS)
		return
	}
	if DeploymentComplete(p.d, p.d.Status) {
		p.cleanupDeployment(oldRSs)
	}
	p.syncRolloutStatus(all, newRS)
}

func (p *planner) reconcileNewReplicaSet(all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) bool {
	want := Replicas(p.d)
	switch {
	case rsReplicas(newRS) == want:
		return false
	case rsReplicas(newRS) > want:
		return p.scaleAndRecord(newRS, want)
	}
	return p.scaleAndRecord(newRS, NewRSNewReplicas(p.d, all, newRS))
}

func (p *planner) reconcileOldReplicaSets(all, oldRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) bool {
	if ReplicaCount(oldRSs) == 0 {
		return false
	}
	allPods := ReplicaCount(all)
	minAvailable := Replicas(p.d) - MaxUnavailable(p.d)
	newUnavailable := rsReplicas(newRS) - newRS.GetStatus().GetAvailableReplicas()
	maxScaledDown := allPods - minAvailable - newUnavailable
	if maxScaledDown <= 0 {
		return false
	}
	cleaned := p.cleanupUnhealthyReplicas(oldRSs, maxScaledDown)
	all = append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS)
	scaled := p.scaleDownOldReplicaSetsForRollingUpdate(all, oldRSs)
	return cleaned+scaled > 0
}

// cleanupUnhealthyReplicas scales down the unavailable pods of old
// ReplicaSets first, oldest first, up to max.
func (p *planner) cleanupUnhealthyReplicas(oldRSs []*appsv1.ReplicaSet, maxCleanup int32) int32 {
	sort.SliceStable(oldRSs, byCreation(oldRSs))
	total := int32(0)
	for _, rs := range oldRSs {
		if total >= maxCleanup {
			break
		}
		if rsReplicas(rs) == 0 || rsReplicas(rs) == rs.GetStatus().GetAvailableReplicas() {
			continue
		}
		n := min(maxCleanup-total, rsReplicas(rs)-rs.GetStatus().GetAvailableReplicas())
		p.scaleAndRecord(rs, rsReplicas(rs)-n)
		total += n
	}
	return total
}

// scaleDownOldReplicaSetsForRollingUpdate scales old ReplicaSets down, oldest
// first, as far as availability allows.
func (p *planner) scaleDownOldReplicaSetsForRollingUpdate(all, oldRSs []*appsv1.ReplicaSet) int32 {
	minAvailable := Replicas(p.d) - MaxUnavailable(p.d)
	available := AvailableReplicaCount(all)
	if available <= minAvailable {
		return 0
	}
	sort.SliceStable(oldRSs, byCreation(oldRSs))
	total, target := int32(0), available-minAvailable
	for _, rs := range oldRSs {
		if total >= target {
			break
		}
		if rsReplicas(rs) == 0 {
			continue
		}
		n := min(rsReplicas(rs), target-total)
		p.scaleAndRecord(rs, rsReplicas(rs)-n)
		total += n
	}
	return total
}

// ------------------------------------------------------------ recreate

func (p *planner) rolloutRecreate() {
	newRS, oldRSs := p.getAllReplicaSetsAndSyncRevision(false)
	all := append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS)
	scaledDown := false
	for _, rs := range FilterActive(oldRSs) {
		if p.scaleAndRecord(rs, 0) {
			scaledDown = true
		}
	}
	if scaledDown {
		p.syncRolloutStatus(all, newRS)
		return
	}
	if p.oldPodsRunning(newRS, oldRSs) {
		p.syncRolloutStatus(all, newRS)
		return
	}
	if newRS == nil {
		newRS, oldRSs = p.getAllReplicaSetsAndSyncRevision(true)
		all = append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS)
	}
	p.scaleAndRecord(newRS, Replicas(p.d))
	if DeploymentComplete(p.d, p.d.Status) {
		p.cleanupDeployment(oldRSs)
	}
	p.syncRolloutStatus(all, newRS)
}

func (p *planner) oldPodsRunning(newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) bool {
	if ActualReplicaCount(oldRSs) > 0 {
		return true
	}
	for uid, pods := range p.pods {
		if newRS != nil && newRS.GetMetadata().GetUid() == uid {
			continue
		}
		for _, pod := range pods {
			switch pod.GetStatus().GetPhase() {
			case controller.PodFailed, controller.PodSucceeded:
				continue
			}
			return true
		}
	}
	return false
}

// ------------------------------------------------------------- cleanup

// cleanupDeployment deletes the oldest old ReplicaSets beyond
// revisionHistoryLimit that have scaled to zero.
func (p *planner) cleanupDeployment(oldRSs []*appsv1.ReplicaSet) {
	var cleanable []*appsv1.ReplicaSet
	for _, rs := range oldRSs {
		if rs != nil && rs.GetMetadata().GetDeletionTimestamp() == nil {
			cleanable = append(cleanable, rs)
		}
	}
	diff := int32(len(cleanable)) - revisionHistoryLimit(p.d)
	if diff <= 0 {
		return
	}
	sort.SliceStable(cleanable, byRevision(cleanable))
	for i := int32(0); i < diff; i++ {
		rs := cleanable[i]
		if rs.GetStatus().GetReplicas() != 0 || rsReplicas(rs) != 0 || rs.GetMetadata().GetGeneration() > rs.GetStatus().GetObservedGeneration() {
			continue
		}
		p.plan.Writes = append(p.plan.Writes, Write{Kind: DeleteReplicaSet, ReplicaSet: object.Copy(rs)})
	}
}

// -------------------------------------------------------------- status

func (p *planner) calculateStatus(all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) *appsv1.DeploymentStatus {
	d := p.d
	available := AvailableReplicaCount(all)
	unavailable := max(ReplicaCount(all)-available, 0)
	s := &appsv1.DeploymentStatus{
		ObservedGeneration:  d.GetMetadata().GetGeneration(),
		Replicas:            ActualReplicaCount(all),
		UpdatedReplicas:     ActualReplicaCount([]*appsv1.ReplicaSet{newRS}),
		ReadyReplicas:       readyReplicaCount(all),
		AvailableReplicas:   available,
		UnavailableReplicas: unavailable,
		CollisionCount:      d.GetStatus().CollisionCount,
	}
	for _, c := range d.GetStatus().GetConditions() {
		s.Conditions = append(s.Conditions, proto.Clone(c).(*appsv1.DeploymentCondition))
	}
	if available >= Replicas(d)-MaxUnavailable(d) {
		setCondition(s, newCondition(ConditionAvailable, controller.ConditionTrue, ReasonMinimumReplicasAvail, "Deployment has minimum availability.", p.now))
	} else {
		setCondition(s, newCondition(ConditionAvailable, controller.ConditionFalse, ReasonMinimumReplicasUnavail, "Deployment does not have minimum availability.", p.now))
	}
	return s
}

func (p *planner) syncStatusOnly() {
	newRS, oldRSs := p.getAllReplicaSetsAndSyncRevision(false)
	p.syncDeploymentStatus(append(oldRSs, newRS), newRS)
}

func (p *planner) syncDeploymentStatus(all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) {
	p.d.Status = p.calculateStatus(all, newRS)
}

// syncRolloutStatus computes the status with the Progressing condition.
func (p *planner) syncRolloutStatus(all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) {
	d := p.d
	s := p.calculateStatus(all, newRS)
	if !HasProgressDeadline(d) {
		removeCondition(s, ConditionProgressing)
	}
	cur := getCondition(d.Status, ConditionProgressing)
	complete := s.GetReplicas() == s.GetUpdatedReplicas() && cur != nil && cur.GetReason() == ReasonNewRSAvailable
	if HasProgressDeadline(d) && !complete {
		name := newRS.GetMetadata().GetName()
		switch {
		case DeploymentComplete(d, s):
			msg := "Deployment has successfully progressed."
			if newRS != nil {
				msg = fmt.Sprintf("ReplicaSet %q has successfully progressed.", name)
			}
			setCondition(s, newCondition(ConditionProgressing, controller.ConditionTrue, ReasonNewRSAvailable, msg, p.now))
		case DeploymentProgressing(d, s):
			msg := "Deployment is progressing."
			if newRS != nil {
				msg = fmt.Sprintf("ReplicaSet %q is progressing.", name)
			}
			c := newCondition(ConditionProgressing, controller.ConditionTrue, ReasonReplicaSetUpdated, msg, p.now)
			if cur != nil {
				if cur.GetStatus() == controller.ConditionTrue {
					c.LastTransitionTime = cur.LastTransitionTime
				}
				removeCondition(s, ConditionProgressing)
			}
			setCondition(s, c)
		case DeploymentTimedOut(d, s, p.now):
			msg := "Deployment has timed out progressing."
			if newRS != nil {
				msg = fmt.Sprintf("ReplicaSet %q has timed out progressing.", name)
			}
			setCondition(s, newCondition(ConditionProgressing, controller.ConditionFalse, ReasonTimedOut, msg, p.now))
		}
	}
	if proto.Equal(d.Status, s) {
		p.requeueStuck(s)
	}
	d.Status = s
}

// requeueStuck asks for a sync when the progress deadline would pass.
func (p *planner) requeueStuck(s *appsv1.DeploymentStatus) {
	d := p.d
	cur := getCondition(d.Status, ConditionProgressing)
	if !HasProgressDeadline(d) || cur == nil {
		return
	}
	if DeploymentComplete(d, s) || cur.GetReason() == ReasonTimedOut {
		return
	}
	after := time.Unix(cur.GetLastUpdateTime().GetSeconds(), 0).Add(time.Duration(progressDeadline(d)) * time.Second).Sub(p.now)
	p.plan.RequeueAfter = max(after, time.Second)
}

func (p *planner) checkPausedConditions() {
	d := p.d
	if !HasProgressDeadline(d) {
		return
	}
	cond := getCondition(d.Status, ConditionProgressing)
	if cond != nil && cond.GetReason() == ReasonTimedOut {
		return
	}
	pausedExists := cond != nil && cond.GetReason() == ReasonPaused
	switch {
	case d.GetSpec().GetPaused() && !pausedExists:
		setCondition(d.Status, newCondition(ConditionProgressing, controller.ConditionUnknown, ReasonPaused, "Deployment is paused", p.now))
	case !d.GetSpec().GetPaused() && pausedExists:
		setCondition(d.Status, newCondition(ConditionProgressing, controller.ConditionUnknown, ReasonResumed, "Deployment is resumed", p.now))
	}
}
