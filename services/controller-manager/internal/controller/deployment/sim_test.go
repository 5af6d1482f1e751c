package deployment

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/object"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	ctltest "podline.dev/services/controller-manager/internal/controller/testing"
)

// sim is a cluster reduced to what the rollout core sees: a deployment and
// its ReplicaSets. After each sync, the ReplicaSet controller and kubelets
// are simulated: every ReplicaSet has as many pods as its spec asks for at
// once; a pod becomes available one step after it was created (or never,
// while stuck is set); a scale-down removes unavailable pods first.
type sim struct {
	t     *testing.T
	d     *appsv1.Deployment
	rss   []*appsv1.ReplicaSet
	now   time.Time
	uid   int
	stuck bool
	log   []string
	// minAvailable is checked after every step once armed.
	minAvailable int32
	armed        bool
	maxPods      int32
}

func newSim(t *testing.T, d *appsv1.Deployment) *sim {
	return &sim{t: t, d: d, now: ctltest.Epoch, minAvailable: -1, maxPods: 1 << 30}
}

func (s *sim) input() Input {
	return Input{Deployment: s.d, ReplicaSets: s.rss, Now: s.now, PodsByReplicaSet: s.pods()}
}

// pods are only consulted by Recreate: one running pod per status replica.
func (s *sim) pods() map[string][]*corev1.Pod {
	out := map[string][]*corev1.Pod{}
	for _, rs := range s.rss {
		for range rs.GetStatus().GetReplicas() {
			out[rs.Metadata.Uid] = append(out[rs.Metadata.Uid], &corev1.Pod{Status: &corev1.PodStatus{Phase: "Running"}})
		}
	}
	return out
}

// step runs one sync and the simulated pods, and logs what happened.
func (s *sim) step() Plan {
	s.t.Helper()
	plan := Sync(s.input())
	var writes []string
	for _, w := range plan.Writes {
		writes = append(writes, w.String())
		s.apply(w)
	}
	for _, e := range plan.Events {
		writes = append(writes, "event "+e.Reason+": "+e.Message)
	}
	s.now = s.now.Add(10 * time.Second)
	s.pods2()
	s.log = append(s.log, fmt.Sprintf("sync: %s\n  state: %s", orNone(writes), s.state()))
	s.check()
	return plan
}

func orNone(w []string) string {
	if len(w) == 0 {
		return "(no writes)"
	}
	return strings.Join(w, "; ")
}

func (s *sim) apply(w Write) {
	switch w.Kind {
	case CreateReplicaSet:
		rs := object.Copy(w.ReplicaSet)
		s.uid++
		rs.Metadata.Uid = fmt.Sprintf("rs-%d", s.uid)
		rs.Metadata.Generation = 1
		rs.Metadata.CreationTimestamp = &metav1.Time{Seconds: s.now.Unix() + int64(s.uid)}
		s.rss = append(s.rss, rs)
	case UpdateReplicaSet:
		for i, rs := range s.rss {
			if rs.Metadata.Name == w.ReplicaSet.Metadata.Name {
				n := object.Copy(w.ReplicaSet)
				n.Status = rs.Status
				if !proto.Equal(n.Spec, rs.Spec) {
					n.Metadata.Generation = rs.Metadata.Generation + 1
				}
				s.rss[i] = n
			}
		}
	case DeleteReplicaSet:
		s.rss = slices.DeleteFunc(s.rss, func(rs *appsv1.ReplicaSet) bool { return rs.Metadata.Name == w.ReplicaSet.Metadata.Name })
	case UpdateDeploymentStatus:
		n := object.Copy(w.Deployment)
		n.Spec = s.d.Spec
		s.d = n
	}
}

// pods2 plays the ReplicaSet controller and the kubelets for one step.
func (s *sim) pods2() {
	for _, rs := range s.rss {
		st := rs.Status
		if st == nil {
			st = &appsv1.ReplicaSetStatus{}
			rs.Status = st
		}
		want := rsReplicas(rs)
		existing := st.Replicas
		avail := st.AvailableReplicas
		if !s.stuck {
			avail = existing // pods that existed a step ago are available now
		}
		avail = min(avail, want)
		st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.FullyLabeledReplicas = want, avail, avail, want
		st.ObservedGeneration = rs.Metadata.Generation
	}
}

func (s *sim) state() string {
	sorted := slices.Clone(s.rss)
	sort.SliceStable(sorted, byCreation(sorted))
	var parts []string
	for _, rs := range sorted {
		parts = append(parts, fmt.Sprintf("%s(rev %d) %d/%d available",
			strings.TrimPrefix(rs.Metadata.Name, s.d.Metadata.Name+"-"), Revision(rs), rs.Status.GetAvailableReplicas(), rsReplicas(rs)))
	}
	st := s.d.GetStatus()
	prog := getCondition(st, ConditionProgressing)
	return fmt.Sprintf("%s | deployment replicas=%d updated=%d available=%d progressing=%s",
		strings.Join(parts, ", "), st.GetReplicas(), st.GetUpdatedReplicas(), st.GetAvailableReplicas(), prog.GetReason())
}

func (s *sim) available() (avail, pods int32) {
	for _, rs := range s.rss {
		avail += rs.GetStatus().GetAvailableReplicas()
		pods += rs.GetStatus().GetReplicas()
	}
	return avail, pods
}

func (s *sim) check() {
	s.t.Helper()
	avail, pods := s.available()
	if s.armed && avail < s.minAvailable {
		s.t.Errorf("available pods dropped to %d (< %d) after:\n%s", avail, s.minAvailable, strings.Join(s.log, "\n"))
	}
	if pods > s.maxPods {
		s.t.Errorf("%d pods exist (> %d) after:\n%s", pods, s.maxPods, strings.Join(s.log, "\n"))
	}
}

// settle steps until a sync writes nothing, at most n times.
func (s *sim) settle(n int) {
	s.t.Helper()
	for range n {
		if plan := s.step(); len(plan.Writes) == 0 {
			return
		}
	}
	s.t.Fatalf("no steady state after %d syncs:\n%s", n, strings.Join(s.log, "\n"))
}

func (s *sim) newRS() *appsv1.ReplicaSet { return FindNewReplicaSet(s.d, s.rss) }

func (s *sim) setTemplate(image string) {
	d := object.Copy(s.d)
	d.Spec.Template.Spec.Containers[0].Image = image
	d.Metadata.Generation++
	s.d = d
	s.log = append(s.log, "# image -> "+image)
}

func (s *sim) setReplicas(n int32) {
	d := object.Copy(s.d)
	d.Spec.Replicas = proto.Int32(n)
	d.Metadata.Generation++
	s.d = d
	s.log = append(s.log, fmt.Sprintf("# replicas -> %d", n))
}
