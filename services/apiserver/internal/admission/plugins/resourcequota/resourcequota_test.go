package resourcequota

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/object"
	"podline.dev/proto/apis"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/admission"
)

func pod(name, cpu, mem, phase string) *corev1.Pod {
	return &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: name, Namespace: "team"},
		Spec: &corev1.PodSpec{Containers: []*corev1.Container{{Name: "web", Image: "w",
			Resources: &corev1.ResourceRequirements{Requests: map[string]string{"cpu": cpu, "memory": mem}}}}},
		Status: &corev1.PodStatus{Phase: phase}}
}

func makeQuota(hard map[string]string) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{Metadata: &metav1.ObjectMeta{Name: "compute", Namespace: "team", ResourceVersion: "1"},
		Spec: &corev1.ResourceQuotaSpec{Hard: hard}}
}

func withUsed(q *corev1.ResourceQuota, used map[string]string) *corev1.ResourceQuota {
	q.Status = &corev1.ResourceQuotaStatus{Hard: maps.Clone(q.Spec.Hard), Used: used}
	return q
}

// store is an in-memory quota store that honours the resourceVersion
// precondition of status writes, as the apiserver's registry does.
type store struct {
	*admission.Memory
	mu     sync.Mutex
	rv     int
	writes atomic.Int32
	// before runs ahead of each status write (a concurrent writer).
	before func(n int32)
}

func newStore(qs ...*corev1.ResourceQuota) *store {
	s := &store{Memory: admission.NewMemory("", "resourcequotas"), rv: 1}
	for _, q := range qs {
		s.Put(q)
	}
	return s
}

func (s *store) UpdateStatus(ctx context.Context, q *corev1.ResourceQuota) error {
	n := s.writes.Add(1)
	if s.before != nil {
		s.before(n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(ctx, q)
}

func (s *store) write(ctx context.Context, q *corev1.ResourceQuota) error {
	cur, err := s.Get(ctx, q.Metadata.Namespace, q.Metadata.Name)
	if err != nil {
		return err
	}
	if cur.GetMetadata().GetResourceVersion() != q.Metadata.ResourceVersion {
		return apierrors.NewOptimisticLock(apierrors.GroupResource{Resource: "resourcequotas"}, q.Metadata.Name)
	}
	next := object.Copy(cur.(*corev1.ResourceQuota))
	next.Status = q.Status
	s.rv++
	next.Metadata.ResourceVersion = strconv.Itoa(s.rv)
	s.Put(next)
	return nil
}

func (s *store) quota(t *testing.T) *corev1.ResourceQuota {
	t.Helper()
	o, err := s.Get(context.Background(), "team", "compute")
	if err != nil {
		t.Fatal(err)
	}
	return o.(*corev1.ResourceQuota)
}

// failingLister fails every List: the plugin must not need it.
type failingLister struct{}

func (failingLister) List(context.Context, string) ([]object.Object, error) {
	return nil, errors.New("pods listed although status.used had them")
}

func newPlugin(s *store, pods admission.Lister) *Plugin {
	return New(Sources{Quotas: s, LiveQuotas: s, Pods: pods, Status: s})
}

func createPod(p *corev1.Pod) *admission.Attributes {
	pods, _ := apis.Lookup("", "pods")
	return &admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "team", Name: p.Metadata.Name, Object: p}
}

var existing = admission.NewMemory("", "pods",
	pod("a", "500m", "256Mi", "Running"), pod("b", "250m", "256Mi", "Pending"), pod("done", "4", "4Gi", "Succeeded"))

func TestResourceQuota(t *testing.T) {
	for _, tc := range []struct {
		name     string
		quotas   []*corev1.ResourceQuota
		pod      *corev1.Pod
		want     string
		wantUsed map[string]string
	}{
		{name: "no quota", pod: pod("c", "8", "8Gi", "")},
		{name: "fits, usage computed from the pods", quotas: []*corev1.ResourceQuota{makeQuota(map[string]string{"pods": "3", "requests.cpu": "1", "requests.memory": "1Gi"})},
			pod: pod("c", "250m", "512Mi", ""), wantUsed: map[string]string{"pods": "3", "requests.cpu": "1", "requests.memory": "1Gi"}},
		{name: "pod count", quotas: []*corev1.ResourceQuota{makeQuota(map[string]string{"pods": "2"})}, pod: pod("c", "1m", "1Mi", ""),
			want: `pods "c" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2`},
		{name: "cpu and memory", quotas: []*corev1.ResourceQuota{makeQuota(map[string]string{"cpu": "1", "requests.memory": "1Gi", "pods": "10"})}, pod: pod("c", "500m", "1Gi", ""),
			want: `pods "c" is forbidden: exceeded quota: compute, requested: cpu=500m,requests.memory=1Gi, used: cpu=750m,requests.memory=512Mi, limited: cpu=1,requests.memory=1Gi`},
		{name: "limit not set", quotas: []*corev1.ResourceQuota{makeQuota(map[string]string{"limits.cpu": "2", "limits.memory": "2Gi"})}, pod: pod("c", "1m", "1Mi", ""),
			want: `pods "c" is forbidden: failed quota: compute: must specify limits.cpu for: web; limits.memory for: web`},
		{name: "status.used is trusted over the pods", quotas: []*corev1.ResourceQuota{withUsed(makeQuota(map[string]string{"pods": "5"}), map[string]string{"pods": "4"})},
			pod: pod("c", "1m", "1Mi", ""), wantUsed: map[string]string{"pods": "5"}},
		{name: "full by status.used", quotas: []*corev1.ResourceQuota{withUsed(makeQuota(map[string]string{"count/pods": "5"}), map[string]string{"count/pods": "5"})},
			pod: pod("c", "1m", "1Mi", ""), want: `pods "c" is forbidden: exceeded quota: compute, requested: count/pods=1, used: count/pods=5, limited: count/pods=5`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(tc.quotas...)
			var pods admission.Lister = existing
			if tc.quotas != nil && tc.quotas[0].Status != nil {
				pods = failingLister{}
			}
			err := newPlugin(s, pods).Validate(context.Background(), createPod(tc.pod))
			if tc.want != "" {
				if !apierrors.IsForbidden(err) || err.Error() != tc.want {
					t.Fatalf("err = %v\nwant %s", err, tc.want)
				}
				if s.writes.Load() != 0 {
					t.Error("a refused create was charged")
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tc.wantUsed == nil {
				return
			}
			q := s.quota(t)
			if !maps.Equal(q.Status.Used, tc.wantUsed) || !maps.Equal(q.Status.Hard, q.Spec.Hard) {
				t.Errorf("status = %v, want used %v and hard = spec.hard", q.Status, tc.wantUsed)
			}
		})
	}
}

func TestConcurrentCreatesCannotBothFit(t *testing.T) {
	s := newStore(withUsed(makeQuota(map[string]string{"pods": "2"}), map[string]string{"pods": "0"}))
	p := newPlugin(s, failingLister{})
	var wg sync.WaitGroup
	var admitted, refused atomic.Int32
	for i := range 5 {
		wg.Go(func() {
			err := p.Validate(context.Background(), createPod(pod("p"+strconv.Itoa(i), "1m", "1Mi", "")))
			switch {
			case err == nil:
				admitted.Add(1)
			case apierrors.IsForbidden(err):
				refused.Add(1)
			default:
				t.Errorf("create %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if admitted.Load() != 2 || refused.Load() != 3 {
		t.Errorf("admitted %d, refused %d; want 2 and 3", admitted.Load(), refused.Load())
	}
	if got := s.quota(t).Status.Used["pods"]; got != "2" {
		t.Errorf("status.used pods = %s, want 2", got)
	}
}

func TestConflictRereadsTheQuota(t *testing.T) {
	s := newStore(withUsed(makeQuota(map[string]string{"pods": "2"}), map[string]string{"pods": "0"}))
	// Another apiserver charges the quota just before this one writes.
	s.before = func(n int32) {
		if n == 1 {
			q := object.Copy(s.quota(t))
			q.Status.Used = map[string]string{"pods": "2"}
			s.mu.Lock()
			defer s.mu.Unlock()
			if err := s.write(context.Background(), q); err != nil {
				t.Error(err)
			}
		}
	}
	err := newPlugin(s, failingLister{}).Validate(context.Background(), createPod(pod("c", "1m", "1Mi", "")))
	want := `pods "c" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}

func TestEndlessConflictsFailTheCreate(t *testing.T) {
	s := newStore(withUsed(makeQuota(map[string]string{"pods": "10"}), map[string]string{"pods": "0"}))
	s.before = func(int32) {
		q := object.Copy(s.quota(t))
		s.mu.Lock()
		defer s.mu.Unlock()
		_ = s.write(context.Background(), q)
	}
	err := newPlugin(s, failingLister{}).Validate(context.Background(), createPod(pod("c", "1m", "1Mi", "")))
	if !apierrors.IsConflict(err) {
		t.Fatalf("err = %v, want the quota's Conflict", err)
	}
	if n := s.writes.Load(); n != Retries+1 {
		t.Errorf("%d writes, want %d", n, Retries+1)
	}
}

func TestDryRunIsCheckedButNotCharged(t *testing.T) {
	s := newStore(withUsed(makeQuota(map[string]string{"pods": "1"}), map[string]string{"pods": "0"}))
	a := createPod(pod("c", "1m", "1Mi", ""))
	a.DryRun = true
	if err := newPlugin(s, failingLister{}).Validate(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if s.writes.Load() != 0 {
		t.Error("a dry run was charged")
	}
}

func TestObjectCounts(t *testing.T) {
	cms, _ := apis.Lookup("", "configmaps")
	create := func(name string) *admission.Attributes {
		return &admission.Attributes{Operation: admission.Create, Resource: cms, Namespace: "team", Name: name,
			Object: &corev1.ConfigMap{Metadata: &metav1.ObjectMeta{Name: name, Namespace: "team"}}}
	}
	s := newStore(makeQuota(map[string]string{"count/configmaps": "1", "pods": "1"}))
	err := newPlugin(s, failingLister{}).Validate(context.Background(), create("a"))
	if want := `configmaps "a" is forbidden: status unknown for quota: compute, resources: count/configmaps`; err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	s = newStore(withUsed(makeQuota(map[string]string{"count/configmaps": "1", "pods": "1"}), map[string]string{"count/configmaps": "0", "pods": "0"}))
	p := newPlugin(s, failingLister{})
	if err := p.Validate(context.Background(), create("a")); err != nil {
		t.Fatal(err)
	}
	if got := s.quota(t).Status.Used; !maps.Equal(got, map[string]string{"count/configmaps": "1", "pods": "0"}) {
		t.Errorf("used = %v", got)
	}
	err = p.Validate(context.Background(), create("b"))
	if want := `configmaps "b" is forbidden: exceeded quota: compute, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1`; err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}

func TestQuotaNotYetCached(t *testing.T) {
	live := newStore(withUsed(makeQuota(map[string]string{"pods": "1", "count/configmaps": "1"}),
		map[string]string{"pods": "1", "count/configmaps": "1"}))
	p := New(Sources{Quotas: admission.NewMemory("", "resourcequotas"), LiveQuotas: live, Pods: failingLister{}, Status: live})
	err := p.Validate(context.Background(), createPod(pod("c", "1m", "1Mi", "")))
	if want := `pods "c" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=1, limited: pods=1`; err == nil || err.Error() != want {
		t.Fatalf("a pod is checked against quotas read from storage: %v", err)
	}
	cms, _ := apis.Lookup("", "configmaps")
	cm := &admission.Attributes{Operation: admission.Create, Resource: cms, Namespace: "team", Name: "a",
		Object: &corev1.ConfigMap{Metadata: &metav1.ObjectMeta{Name: "a", Namespace: "team"}}}
	if err := p.Validate(context.Background(), cm); err != nil {
		t.Fatalf("other kinds go by the cache alone: %v", err)
	}
}

// countingLister counts its Lists.
type countingLister struct {
	admission.Lister
	n int
}

func (c *countingLister) List(ctx context.Context, ns string) ([]object.Object, error) {
	c.n++
	return c.Lister.List(ctx, ns)
}

func TestNoQuotaLookupStandsForItsTTL(t *testing.T) {
	live := &countingLister{Lister: admission.NewMemory("", "resourcequotas")}
	now := time.Unix(1000, 0)
	p := New(Sources{Quotas: admission.NewMemory("", "resourcequotas"), LiveQuotas: live, Pods: failingLister{}, Status: newStore(),
		Now: func() time.Time { return now }})
	create := func(name string) {
		t.Helper()
		if err := p.Validate(context.Background(), createPod(pod(name, "1m", "1Mi", ""))); err != nil {
			t.Fatal(err)
		}
	}
	create("a")
	create("b")
	now = now.Add(LiveLookupTTL - time.Second)
	create("c")
	if live.n != 1 {
		t.Fatalf("storage read %d times within %v of finding no quota, want 1", live.n, LiveLookupTTL)
	}
	now = now.Add(2 * time.Second)
	create("d")
	if live.n != 2 {
		t.Fatalf("storage read %d times after the lookup lapsed, want 2", live.n)
	}
	other := createPod(pod("e", "1m", "1Mi", ""))
	other.Namespace = "elsewhere"
	if err := p.Validate(context.Background(), other); err != nil || live.n != 3 {
		t.Fatalf("another namespace is looked up on its own: %v, %d reads", err, live.n)
	}
}
