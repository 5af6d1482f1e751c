package node

import (
	clientcache "podline.dev/pkg/client/cache"
	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/internal/authz/cache"
)

// NodeIndex is the Pod cache's index by spec.nodeName.
const NodeIndex = "spec.nodeName"

// IndexByNode indexes Pods by the node they are bound to.
func IndexByNode(obj object.Object) ([]string, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok || p.GetSpec().GetNodeName() == "" {
		return nil, nil
	}
	return []string{p.GetSpec().GetNodeName()}, nil
}

// Indexers are the indexes a Pod cache needs for CacheGraph.
func Indexers() clientcache.Indexers { return clientcache.Indexers{NodeIndex: IndexByNode} }

// CacheGraph reads relationships from a Pod cache built with Indexers.
type CacheGraph struct {
	Pods *cache.Cache
	// Live reads a Pod from storage. It is asked only when the cache has
	// not seen the Pod yet, or has it unbound: a Pod created or bound a
	// moment ago may not have reached the cache when its kubelet asks.
	Live func(namespace, name string) (*corev1.Pod, bool)
}

var _ Graph = CacheGraph{}

// Pod implements Graph.
func (g CacheGraph) Pod(namespace, name string) (*corev1.Pod, bool) {
	obj, ok := g.Pods.Get(namespace, name)
	p, _ := obj.(*corev1.Pod)
	if ok && p != nil && p.GetSpec().GetNodeName() != "" {
		return p, true
	}
	if g.Live != nil {
		return g.Live(namespace, name)
	}
	return p, ok && p != nil
}

// PodsOnNode implements Graph.
func (g CacheGraph) PodsOnNode(node string) []*corev1.Pod {
	objs, _ := g.Pods.ByIndex(NodeIndex, node)
	out := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			out = append(out, p)
		}
	}
	return out
}
