package controller_test

import (
	"testing"

	"podline.dev/pkg/client/cache"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/controller-manager/internal/controller"
)

func replicaSet(namespace, name, uid string, selector map[string]string) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		Metadata: &metav1.ObjectMeta{Namespace: namespace, Name: name, Uid: uid},
		Spec:     &appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: selector}},
	}
}

// A controllerRef resolves to the cached owner of its kind, name and UID
// only; orphans are offered to every owner in their namespace whose
// selector matches them, never to one with an empty selector.
func TestResolveControllerRefAndSelectingOwners(t *testing.T) {
	indexer := cache.NewIndexer(nil, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, rs := range []*appsv1.ReplicaSet{
		replicaSet("default", "web", "uid-web", map[string]string{"app": "web"}),
		replicaSet("default", "web-canary", "uid-canary", map[string]string{"app": "web", "track": "canary"}),
		replicaSet("default", "everything", "uid-all", nil),
		replicaSet("other", "web", "uid-other", map[string]string{"app": "web"}),
	} {
		if err := indexer.Add(rs); err != nil {
			t.Fatal(err)
		}
	}
	lister := cache.NewLister[*appsv1.ReplicaSet](indexer, controller.GroupResource(controller.ResourceOf[*appsv1.ReplicaSet]()))

	ref := func(kind, name, uid string) *metav1.OwnerReference {
		return &metav1.OwnerReference{Kind: kind, Name: name, Uid: uid}
	}
	if rs := controller.ResolveControllerRef(lister, "default", ref("ReplicaSet", "web", "uid-web")); rs == nil || rs.GetMetadata().GetUid() != "uid-web" {
		t.Errorf("resolved %v", rs)
	}
	for name, r := range map[string]*metav1.OwnerReference{
		"another uid (a namesake)": ref("ReplicaSet", "web", "uid-old"),
		"another kind":             ref("Deployment", "web", "uid-web"),
		"missing":                  ref("ReplicaSet", "gone", "uid-gone"),
		"no ref":                   nil,
	} {
		if rs := controller.ResolveControllerRef(lister, "default", r); rs != nil {
			t.Errorf("%s: resolved to %s", name, rs.GetMetadata().GetName())
		}
	}

	pod := &corev1.Pod{Metadata: &metav1.ObjectMeta{Namespace: "default", Name: "p", Labels: map[string]string{"app": "web"}}}
	selector := func(rs *appsv1.ReplicaSet) *metav1.LabelSelector { return rs.GetSpec().GetSelector() }
	owners := controller.SelectingOwners(lister, selector, pod)
	if len(owners) != 1 || owners[0].GetMetadata().GetUid() != "uid-web" {
		t.Errorf("owners of an app=web pod: %v", owners)
	}
	pod.Metadata.Labels["track"] = "canary"
	if owners := controller.SelectingOwners(lister, selector, pod); len(owners) != 2 {
		t.Errorf("owners of a canary pod: %v", owners)
	}
}
