package resourcequota

import (
	"context"
	"maps"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	ctltest "podline.dev/services/controller-manager/internal/controller/testing"
)

func newFixture(t *testing.T) (*ctltest.Fixture, *Controller) {
	t.Helper()
	f := ctltest.NewFixture(t)
	rq, err := New(f.Context)
	if err != nil {
		t.Fatal(err)
	}
	return f, rq
}

func pod(name, cpu string) *ctltest.PodWrapper {
	p := ctltest.MakePod().Name(name).Namespace("team")
	p.Spec.Containers[0].Resources = &corev1.ResourceRequirements{
		Requests: map[string]string{"cpu": cpu, "memory": "64Mi"}, Limits: map[string]string{"memory": "128Mi"}}
	return p
}

func makeQuota(hard, used map[string]string) *corev1.ResourceQuota {
	q := &corev1.ResourceQuota{Metadata: &metav1.ObjectMeta{Name: "compute", Namespace: "team"},
		Spec: &corev1.ResourceQuotaSpec{Hard: hard}}
	if used != nil {
		q.Status = &corev1.ResourceQuotaStatus{Hard: maps.Clone(hard), Used: used}
	}
	return q
}

func status(t *testing.T, f *ctltest.Fixture) *corev1.ResourceQuotaStatus {
	t.Helper()
	return f.Conn.Object("resourcequotas", "team", "compute").(*corev1.ResourceQuota).GetStatus()
}

func TestUsageIsRecomputedFromTheNamespace(t *testing.T) {
	f, rq := newFixture(t)
	hard := map[string]string{"pods": "10", "requests.cpu": "4", "memory": "1Gi", "limits.memory": "2Gi",
		"count/configmaps": "5", "secrets": "3", "requests.storage": "10Gi"}
	// The recorded usage is stale; requests.storage is not measured here
	// and keeps what was recorded.
	f.Add(makeQuota(hard, map[string]string{"pods": "7", "requests.storage": "1Gi"}))
	stuck := pod("stuck", "1").Obj()
	stuck.Metadata.DeletionTimestamp = &metav1.Time{Seconds: ctltest.Epoch.Add(-time.Minute).Unix()}
	stuck.Metadata.DeletionGracePeriodSeconds = proto.Int64(30)
	f.Add(
		pod("a", "500m").Phase("Running").Obj(),
		pod("b", "250m").Obj(),
		pod("done", "2").Phase("Succeeded").Obj(),
		stuck,
		pod("elsewhere", "8").Namespace("other").Obj(),
		&corev1.ConfigMap{Metadata: &metav1.ObjectMeta{Name: "cfg", Namespace: "team"}},
		&corev1.ConfigMap{Metadata: &metav1.ObjectMeta{Name: "cfg", Namespace: "other"}},
	)
	if err := rq.Sync(context.Background(), "team/compute"); err != nil {
		t.Fatal(err)
	}
	f.ExpectWrites("update-status resourcequotas team/compute")
	st := status(t, f)
	want := map[string]string{"pods": "2", "requests.cpu": "750m", "memory": "128Mi", "limits.memory": "256Mi",
		"count/configmaps": "1", "secrets": "0", "requests.storage": "1Gi"}
	if !maps.Equal(st.Used, want) {
		t.Errorf("used = %v\nwant   %v", st.Used, want)
	}
	if !maps.Equal(st.Hard, hard) {
		t.Errorf("hard = %v, want spec.hard", st.Hard)
	}
}

func TestCurrentStatusIsNotWritten(t *testing.T) {
	f, rq := newFixture(t)
	f.Add(makeQuota(map[string]string{"pods": "2"}, map[string]string{"pods": "1"}), pod("a", "1").Obj())
	if err := rq.Sync(context.Background(), "team/compute"); err != nil {
		t.Fatal(err)
	}
	f.ExpectWrites()
}

func TestUsageOfNamesNoLongerHardIsDropped(t *testing.T) {
	f, rq := newFixture(t)
	f.Add(makeQuota(map[string]string{"pods": "2"}, map[string]string{"pods": "0", "requests.cpu": "1"}))
	if err := rq.Sync(context.Background(), "team/compute"); err != nil {
		t.Fatal(err)
	}
	if got := status(t, f).Used; !maps.Equal(got, map[string]string{"pods": "0"}) {
		t.Errorf("used = %v", got)
	}
}

func TestDeletedQuotaIsNoError(t *testing.T) {
	f, rq := newFixture(t)
	if err := rq.Sync(context.Background(), "team/gone"); err != nil {
		t.Fatal(err)
	}
	f.ExpectWrites()
}

func TestTracks(t *testing.T) {
	q := makeQuota(map[string]string{"requests.cpu": "1", "count/deployments.apps": "2"}, nil)
	for _, tc := range []struct {
		gr   groupResource
		want bool
	}{
		{groupResource{"", "pods"}, true},
		{groupResource{"apps", "deployments"}, true},
		{groupResource{"", "configmaps"}, false},
		{groupResource{"apps", "replicasets"}, false},
	} {
		if got := tracks(q, tc.gr); got != tc.want {
			t.Errorf("%v: tracks = %v", tc.gr, got)
		}
	}
}
