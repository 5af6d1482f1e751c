package deployment

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/telemetry"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// Annotations and labels the controller writes, as in Kubernetes.
const (
	RevisionAnnotation        = "deployment.kubernetes.io/revision"
	RevisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	DesiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	MaxReplicasAnnotation     = "deployment.kubernetes.io/max-replicas"
	// PodTemplateHashLabel tells apart the ReplicaSets (and pods) of each template.
	PodTemplateHashLabel = "pod-template-hash"

	lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"
	rollbackToAnnotation  = "deprecated.deployment.rollback.to"
)

// Condition types and reasons of a Deployment, as in Kubernetes.
const (
	ConditionProgressing = "Progressing"
	ConditionAvailable   = "Available"

	ReasonNewReplicaSet          = "NewReplicaSetCreated"
	ReasonFoundNewReplicaSet     = "FoundNewReplicaSet"
	ReasonNewRSAvailable         = "NewReplicaSetAvailable"
	ReasonReplicaSetUpdated      = "ReplicaSetUpdated"
	ReasonTimedOut               = "ProgressDeadlineExceeded"
	ReasonPaused                 = "DeploymentPaused"
	ReasonResumed                = "DeploymentResumed"
	ReasonMinimumReplicasAvail   = "MinimumReplicasAvailable"
	ReasonMinimumReplicasUnavail = "MinimumReplicasUnavailable"
)

// Strategy types.
const (
	RecreateStrategy      = "Recreate"
	RollingUpdateStrategy = "RollingUpdate"
)

// Kubernetes' defaults for fields the apiserver leaves unset here.
const (
	defaultRevisionHistoryLimit = 10
	defaultProgressDeadline     = 600
)

var defaultSurgeOrUnavailable = &metav1.IntOrString{Type: 1, StrVal: "25%"}

// ---------------------------------------------------------------- spec

// Replicas is spec.replicas, 1 when unset.
func Replicas(d *appsv1.Deployment) int32 {
	if r := d.GetSpec().Replicas; r != nil {
		return *r
	}
	return 1
}

func rsReplicas(rs *appsv1.ReplicaSet) int32 {
	if rs == nil {
		return 0
	}
	if r := rs.GetSpec().Replicas; r != nil {
		return *r
	}
	return 1
}

func setRSReplicas(rs *appsv1.ReplicaSet, n int32) { rs.Spec.Replicas = proto.Int32(n) }

// IsRollingUpdate: the strategy is RollingUpdate, the default.
func IsRollingUpdate(d *appsv1.Deployment) bool {
	return d.GetSpec().GetStrategy().GetType() != RecreateStrategy
}

func maxSurgeValue(d *appsv1.Deployment) *metav1.IntOrString {
	if v := d.GetSpec().GetStrategy().GetRollingUpdate().GetMaxSurge(); v != nil {
		return v
	}
	return defaultSurgeOrUnavailable
}

func maxUnavailableValue(d *appsv1.Deployment) *metav1.IntOrString {
	if v := d.GetSpec().GetStrategy().GetRollingUpdate().GetMaxUnavailable(); v != nil {
		return v
	}
	return defaultSurgeOrUnavailable
}

func revisionHistoryLimit(d *appsv1.Deployment) int32 {
	if v := d.GetSpec().RevisionHistoryLimit; v != nil {
		return *v
	}
	return defaultRevisionHistoryLimit
}

func progressDeadline(d *appsv1.Deployment) int32 {
	if v := d.GetSpec().ProgressDeadlineSeconds; v != nil {
		return *v
	}
	return defaultProgressDeadline
}

// HasProgressDeadline: a deadline of MaxInt32 means none.
func HasProgressDeadline(d *appsv1.Deployment) bool {
	return progressDeadline(d) != math.MaxInt32
}

// ScaledValue resolves an IntOrString against total: an int as is, a
// percentage of total rounded up or down.
func ScaledValue(v *metav1.IntOrString, total int32, roundUp bool) (int32, error) {
	if v.GetType() == 0 {
		return v.GetIntVal(), nil
	}
	s := v.GetStrVal()
	if !strings.HasSuffix(s, "%") {
		return 0, fmt.Errorf("invalid value for IntOrString: invalid type: string is not a percentage: %q", s)
	}
	pct, err := strconv.Atoi(strings.TrimSuffix(s, "%"))
	if err != nil {
		return 0, fmt.Errorf("invalid value %q: %v", s, err)
	}
	if roundUp {
		return int32(math.Ceil(float64(pct) * float64(total) / 100)), nil
	}
	return int32(math.Floor(float64(pct) * float64(total) / 100)), nil
}

// ResolveFenceposts resolves maxSurge (rounded up) and maxUnavailable
// (rounded down) against desired replicas; when both are 0, maxUnavailable
// is 1, so a rollout can always progress.
func ResolveFenceposts(maxSurge, maxUnavailable *metav1.IntOrString, desired int32) (surge, unavailable int32, err error) {
	if surge, err = ScaledValue(maxSurge, desired, true); err != nil {
		return 0, 0, err
	}
	if unavailable, err = ScaledValue(maxUnavailable, desired, false); err != nil {
		return 0, 0, err
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, unavailable, nil
}

// validateStrategy reports a strategy whose values do not resolve.
func validateStrategy(d *appsv1.Deployment) error {
	if !IsRollingUpdate(d) {
		return nil
	}
	_, _, err := ResolveFenceposts(maxSurgeValue(d), maxUnavailableValue(d), Replicas(d))
	return err
}

// MaxSurge is the number of pods a rollout may run above replicas.
func MaxSurge(d *appsv1.Deployment) int32 {
	if !IsRollingUpdate(d) {
		return 0
	}
	surge, _, _ := ResolveFenceposts(maxSurgeValue(d), maxUnavailableValue(d), Replicas(d))
	return surge
}

// MaxUnavailable is the number of pods a rollout may run below replicas.
func MaxUnavailable(d *appsv1.Deployment) int32 {
	if !IsRollingUpdate(d) || Replicas(d) == 0 {
		return 0
	}
	_, unavailable, _ := ResolveFenceposts(maxSurgeValue(d), maxUnavailableValue(d), Replicas(d))
	return min(unavailable, Replicas(d))
}

// ---------------------------------------------------------------- hash

// ComputeHash is the pod-template-hash of a template: an FNV-32a of its
// deterministic protobuf bytes (and the collision count, when set), as a
// decimal rendered in the alphabet of generated names.
func ComputeHash(template *corev1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(template)
	h.Write(b)
	if collisionCount != nil {
		var buf [8]byte
		binary.LittleEndian.PutUint32(buf[:], uint32(*collisionCount))
		h.Write(buf[:])
	}
	return safeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
}

// safeEncodeString maps each byte into an alphabet without vowels (and
// without 0, 1 and 3), so the result never spells words, as Kubernetes'
// rand.SafeEncodeString.
func safeEncodeString(s string) string {
	const alphanums = "bcdfghjklmnpqrstvwxz2456789"
	r := make([]byte, len(s))
	for i, b := range []byte(s) {
		r[i] = alphanums[int(b)%len(alphanums)]
	}
	return string(r)
}

// EqualIgnoreHash compares templates ignoring the pod-template-hash label.
func EqualIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	a, b = proto.Clone(a).(*corev1.PodTemplateSpec), proto.Clone(b).(*corev1.PodTemplateSpec)
	if a.GetMetadata() != nil {
		delete(a.Metadata.Labels, PodTemplateHashLabel)
	}
	if b.GetMetadata() != nil {
		delete(b.Metadata.Labels, PodTemplateHashLabel)
	}
	// An empty metadata and none are the same template.
	if a.Metadata == nil {
		a.Metadata = &metav1.ObjectMeta{}
	}
	if b.Metadata == nil {
		b.Metadata = &metav1.ObjectMeta{}
	}
	return proto.Equal(a, b)
}

// ------------------------------------------------------ replica sets

// FindNewReplicaSet is the oldest ReplicaSet whose template is the
// deployment's, or nil.
func FindNewReplicaSet(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	sorted := append([]*appsv1.ReplicaSet(nil), rsList...)
	sort.SliceStable(sorted, byCreation(sorted))
	for _, rs := range sorted {
		if EqualIgnoreHash(rs.GetSpec().GetTemplate(), d.GetSpec().GetTemplate()) {
			return rs
		}
	}
	return nil
}

// FindOldReplicaSets is every ReplicaSet but the new one.
func FindOldReplicaSets(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	newRS := FindNewReplicaSet(d, rsList)
	var old []*appsv1.ReplicaSet
	for _, rs := range rsList {
		if rs != newRS {
			old = append(old, rs)
		}
	}
	return old
}

func created(rs *appsv1.ReplicaSet) int64 {
	return rs.GetMetadata().GetCreationTimestamp().GetSeconds()
}

// byCreation orders oldest first, then by name.
func byCreation(rss []*appsv1.ReplicaSet) func(i, j int) bool {
	return func(i, j int) bool {
		if created(rss[i]) != created(rss[j]) {
			return created(rss[i]) < created(rss[j])
		}
		return rss[i].GetMetadata().GetName() < rss[j].GetMetadata().GetName()
	}
}

// bySizeOlder orders larger first, then older first (scaling down).
func bySizeOlder(rss []*appsv1.ReplicaSet) func(i, j int) bool {
	return func(i, j int) bool {
		if rsReplicas(rss[i]) != rsReplicas(rss[j]) {
			return rsReplicas(rss[i]) > rsReplicas(rss[j])
		}
		return byCreation(rss)(i, j)
	}
}

// bySizeNewer orders larger first, then newer first (scaling up).
func bySizeNewer(rss []*appsv1.ReplicaSet) func(i, j int) bool {
	return func(i, j int) bool {
		if rsReplicas(rss[i]) != rsReplicas(rss[j]) {
			return rsReplicas(rss[i]) > rsReplicas(rss[j])
		}
		return byCreation(rss)(j, i)
	}
}

// byRevision orders by revision, then oldest first.
func byRevision(rss []*appsv1.ReplicaSet) func(i, j int) bool {
	return func(i, j int) bool {
		ri, rj := Revision(rss[i]), Revision(rss[j])
		if ri != rj {
			return ri < rj
		}
		return byCreation(rss)(i, j)
	}
}

// FilterActive keeps the ReplicaSets with replicas > 0.
func FilterActive(rss []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range rss {
		if rs != nil && rsReplicas(rs) > 0 {
			out = append(out, rs)
		}
	}
	return out
}

// ReplicaCount sums spec.replicas.
func ReplicaCount(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += rsReplicas(rs)
		}
	}
	return n
}

// ActualReplicaCount sums status.replicas.
func ActualReplicaCount(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += rs.GetStatus().GetReplicas()
		}
	}
	return n
}

func readyReplicaCount(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += rs.GetStatus().GetReadyReplicas()
		}
	}
	return n
}

// AvailableReplicaCount sums status.availableReplicas.
func AvailableReplicaCount(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += rs.GetStatus().GetAvailableReplicas()
		}
	}
	return n
}

// ----------------------------------------------------------- revisions

// Revision is a ReplicaSet's revision annotation, 0 when absent or bad.
func Revision(rs *appsv1.ReplicaSet) int64 {
	v, err := strconv.ParseInt(rs.GetMetadata().GetAnnotations()[RevisionAnnotation], 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// MaxRevision is the highest revision of rss.
func MaxRevision(rss []*appsv1.ReplicaSet) int64 {
	var m int64
	for _, rs := range rss {
		if rs != nil {
			m = max(m, Revision(rs))
		}
	}
	return m
}

func setAnnotation(md *metav1.ObjectMeta, k, v string) bool {
	if md.Annotations == nil {
		md.Annotations = map[string]string{}
	}
	if cur, ok := md.Annotations[k]; ok && cur == v {
		return false
	}
	md.Annotations[k] = v
	return true
}

// skipCopyAnnotation lists the deployment annotations a ReplicaSet does
// not inherit.
func skipCopyAnnotation(k string) bool {
	switch k {
	case lastAppliedAnnotation, RevisionAnnotation, RevisionHistoryAnnotation, DesiredReplicasAnnotation,
		MaxReplicasAnnotation, rollbackToAnnotation, telemetry.TraceparentAnnotation:
		return true
	}
	return false
}

// setNewReplicaSetAnnotations copies the deployment's annotations to rs,
// raises its revision to newRevision (remembering the old one in
// revision-history when a rollback reuses it) and, for a new ReplicaSet, sets
// the replicas annotations. It reports whether rs changed.
func setNewReplicaSetAnnotations(d *appsv1.Deployment, rs *appsv1.ReplicaSet, newRevision string, exists bool) bool {
	if rs.Metadata == nil {
		rs.Metadata = &metav1.ObjectMeta{}
	}
	changed := false
	for k, v := range d.GetMetadata().GetAnnotations() {
		if skipCopyAnnotation(k) {
			continue
		}
		if setAnnotation(rs.Metadata, k, v) {
			changed = true
		}
	}
	oldRevision := rs.Metadata.GetAnnotations()[RevisionAnnotation]
	oldInt, oldErr := strconv.ParseInt(oldRevision, 10, 64)
	if oldErr != nil {
		if oldRevision != "" {
			return changed // a bad revision is left alone, as Kubernetes does
		}
		oldInt = 0
	}
	newInt, _ := strconv.ParseInt(newRevision, 10, 64)
	if oldInt < newInt {
		setAnnotation(rs.Metadata, RevisionAnnotation, newRevision)
		changed = true
		if oldRevision != "" {
			hist := rs.Metadata.Annotations[RevisionHistoryAnnotation]
			if hist == "" {
				hist = oldRevision
			} else {
				hist += "," + oldRevision
			}
			setAnnotation(rs.Metadata, RevisionHistoryAnnotation, hist)
		}
	}
	if !exists && setReplicasAnnotations(rs, Replicas(d), Replicas(d)+MaxSurge(d)) {
		changed = true
	}
	return changed
}

func setReplicasAnnotations(rs *appsv1.ReplicaSet, desired, maxReplicas int32) bool {
	a := setAnnotation(rs.Metadata, DesiredReplicasAnnotation, strconv.Itoa(int(desired)))
	b := setAnnotation(rs.Metadata, MaxReplicasAnnotation, strconv.Itoa(int(maxReplicas)))
	return a || b
}

func replicasAnnotationsNeedUpdate(rs *appsv1.ReplicaSet, desired, maxReplicas int32) bool {
	ann := rs.GetMetadata().GetAnnotations()
	return ann[DesiredReplicasAnnotation] != strconv.Itoa(int(desired)) || ann[MaxReplicasAnnotation] != strconv.Itoa(int(maxReplicas))
}

func intAnnotation(rs *appsv1.ReplicaSet, k string) (int32, bool) {
	v, ok := rs.GetMetadata().GetAnnotations()[k]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}

// setDeploymentRevision sets the deployment's revision annotation.
func setDeploymentRevision(d *appsv1.Deployment, revision string) bool {
	return setAnnotation(d.Metadata, RevisionAnnotation, revision)
}

// --------------------------------------------------------- conditions

func getCondition(s *appsv1.DeploymentStatus, t string) *appsv1.DeploymentCondition {
	for _, c := range s.GetConditions() {
		if c.GetType() == t {
			return c
		}
	}
	return nil
}

func newCondition(t, status, reason, message string, now time.Time) *appsv1.DeploymentCondition {
	ts := &metav1.Time{Seconds: now.Unix()}
	return &appsv1.DeploymentCondition{Type: t, Status: status, Reason: reason, Message: message,
		LastUpdateTime: ts, LastTransitionTime: proto.Clone(ts).(*metav1.Time)}
}

// setCondition puts c in s unless a condition of its type with the same
// status and reason is there; a same-status change keeps the transition time.
func setCondition(s *appsv1.DeploymentStatus, c *appsv1.DeploymentCondition) {
	cur := getCondition(s, c.GetType())
	if cur != nil && cur.GetStatus() == c.GetStatus() && cur.GetReason() == c.GetReason() {
		return
	}
	if cur != nil && cur.GetStatus() == c.GetStatus() {
		c.LastTransitionTime = cur.LastTransitionTime
	}
	removeCondition(s, c.GetType())
	s.Conditions = append(s.Conditions, c)
}

func removeCondition(s *appsv1.DeploymentStatus, t string) {
	kept := s.Conditions[:0]
	for _, c := range s.Conditions {
		if c.GetType() != t {
			kept = append(kept, c)
		}
	}
	s.Conditions = kept
}

// DeploymentComplete: every replica is updated and available, and the
// status is of the current generation.
func DeploymentComplete(d *appsv1.Deployment, s *appsv1.DeploymentStatus) bool {
	r := Replicas(d)
	return s.GetUpdatedReplicas() == r && s.GetReplicas() == r && s.GetAvailableReplicas() == r &&
		s.GetObservedGeneration() >= d.GetMetadata().GetGeneration()
}

// DeploymentProgressing: newStatus moved forward from the deployment's.
func DeploymentProgressing(d *appsv1.Deployment, s *appsv1.DeploymentStatus) bool {
	old := d.GetStatus()
	oldOld := old.GetReplicas() - old.GetUpdatedReplicas()
	newOld := s.GetReplicas() - s.GetUpdatedReplicas()
	return s.GetUpdatedReplicas() > old.GetUpdatedReplicas() || newOld < oldOld ||
		s.GetReadyReplicas() > old.GetReadyReplicas() || s.GetAvailableReplicas() > old.GetAvailableReplicas()
}

// DeploymentTimedOut: the Progressing condition has not moved for the deadline.
func DeploymentTimedOut(d *appsv1.Deployment, s *appsv1.DeploymentStatus, now time.Time) bool {
	if !HasProgressDeadline(d) {
		return false
	}
	c := getCondition(s, ConditionProgressing)
	if c == nil {
		return false
	}
	switch c.GetReason() {
	case ReasonNewRSAvailable:
		return false
	case ReasonTimedOut:
		return true
	}
	from := time.Unix(c.GetLastUpdateTime().GetSeconds(), 0)
	return from.Add(time.Duration(progressDeadline(d)) * time.Second).Before(now)
}
