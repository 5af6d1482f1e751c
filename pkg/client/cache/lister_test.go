package cache

import (
	"testing"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/labels"
	corev1 "podline.dev/proto/core/v1"
)

func TestListerListsBySelectorAndNamespace(t *testing.T) {
	idx := NewIndexer(nil, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	idx.Add(makePod("default", "web-1").Label("app", "web").Obj())
	idx.Add(makePod("default", "web-2").Label("app", "web").Label("track", "canary").Obj())
	idx.Add(makePod("default", "db").Label("app", "db").Obj())
	idx.Add(makePod("prod", "web-1").Label("app", "web").Obj())
	lister := NewLister[*corev1.Pod](idx, apierrors.GroupResource{Resource: "pods"})

	selector := func(s string) labels.Selector {
		sel, err := labels.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return sel
	}
	tests := []struct {
		name      string
		namespace string // "" lists all namespaces
		selector  labels.Selector
		want      []string
	}{
		{"everything", "", nil, []string{"default/db", "default/web-1", "default/web-2", "prod/web-1"}},
		{"by label", "", selector("app=web"), []string{"default/web-1", "default/web-2", "prod/web-1"}},
		{"by set expression", "", selector("app=web,track notin (canary)"), []string{"default/web-1", "prod/web-1"}},
		{"one namespace", "default", selector("app=web"), []string{"default/web-1", "default/web-2"}},
		{"an empty namespace", "staging", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pods []*corev1.Pod
			var err error
			if tt.namespace == "" {
				pods, err = lister.List(tt.selector)
			} else {
				pods, err = lister.Namespace(tt.namespace).List(tt.selector)
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range sortedByKey(pods) {
				got = append(got, p.GetMetadata().GetNamespace()+"/"+p.GetMetadata().GetName())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestListerGetReturnsNotFoundLikeTheAPI(t *testing.T) {
	idx := NewIndexer(nil, nil) // no namespace index: namespace listers scan
	idx.Add(makePod("default", "web").Obj())
	lister := NewLister[*corev1.Pod](idx, apierrors.GroupResource{Resource: "pods"})

	pod, err := lister.Namespace("default").Get("web")
	if err != nil || pod.GetMetadata().GetName() != "web" {
		t.Fatalf("Get = %v, %v", pod, err)
	}
	if pods, _ := lister.Namespace("default").List(nil); len(pods) != 1 {
		t.Fatalf("scan found %d pods", len(pods))
	}
	_, err = lister.Get("default", "db")
	if !apierrors.IsNotFound(err) || err.Error() != `pods "db" not found` {
		t.Fatalf("got %v, want NotFound", err)
	}
	nodes := NewLister[*corev1.Node](idx, apierrors.GroupResource{Resource: "nodes"})
	if _, err := nodes.Get("default", "web"); err == nil || apierrors.IsNotFound(err) {
		t.Fatalf("a pod read as a node: %v", err)
	}
}
