package server

import (
	"context"

	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/admission"
	"podline.dev/services/apiserver/internal/admission/plugins"
	"podline.dev/services/apiserver/internal/admission/plugins/resourcequota"
	"podline.dev/services/apiserver/internal/registry"
)

// admissionChain builds the chain over the server's registries. The
// registries are looked up when a plugin reads, so the chain can be built
// before them.
func (s *Server) admissionChain() *admission.Chain {
	return plugins.NewChain(plugins.Sources{
		Namespaces:         cachedReader{s, "namespaces"},
		LiveNamespaces:     liveReader{s, "namespaces"},
		ServiceAccounts:    cachedReader{s, "serviceaccounts"},
		PriorityClasses:    cachedReader{s, "priorityclasses.scheduling.k8s.io"},
		ResourceQuotas:     cachedReader{s, "resourcequotas"},
		LiveResourceQuotas: liveReader{s, "resourcequotas"},
		QuotaStatus:        quotaStatus{s},
		Pods:               liveReader{s, "pods"},
		CachedPods:         cachedReader{s, "pods"},
	})
}

// cachedReader reads a resource from its watch cache, falling back to
// etcd when the cache does not hold the object yet (it was just created).
type cachedReader struct {
	s        *Server
	resource string
}

var (
	_ admission.Getter = cachedReader{}
	_ admission.Lister = cachedReader{}
)

func (c cachedReader) Get(ctx context.Context, namespace, name string) (object.Object, error) {
	reg := c.s.registries[c.resource]
	if obj, ok := reg.GetCached(namespace, name); ok {
		return obj, nil
	}
	return reg.Get(ctx, namespace, name)
}

func (c cachedReader) List(ctx context.Context, namespace string) ([]object.Object, error) {
	items, _, err := c.s.registries[c.resource].List(ctx, &metav1.ListRequest{Namespace: namespace, ResourceVersion: "0"})
	return items, err
}

// liveReader reads from etcd: quota usage must count the pod created a
// moment ago, and a namespace deleted a moment ago must read Terminating,
// which the watch cache may not show yet.
type liveReader struct {
	s        *Server
	resource string
}

var (
	_ admission.Lister = liveReader{}
	_ admission.Getter = liveReader{}
)

func (l liveReader) Get(ctx context.Context, namespace, name string) (object.Object, error) {
	return l.s.registries[l.resource].Get(ctx, namespace, name)
}

func (l liveReader) List(ctx context.Context, namespace string) ([]object.Object, error) {
	items, _, err := l.s.registries[l.resource].List(ctx, &metav1.ListRequest{Namespace: namespace})
	return items, err
}

// quotaStatus is how quota admission charges a quota: a status write with
// the quota's resourceVersion as precondition, under the apiserver's own
// field manager (Kubernetes' loopback client is kube-apiserver).
type quotaStatus struct{ s *Server }

var _ resourcequota.StatusWriter = quotaStatus{}

func (q quotaStatus) UpdateStatus(ctx context.Context, rq *corev1.ResourceQuota) error {
	md := rq.GetMetadata()
	_, err := q.s.registries["resourcequotas"].UpdateStatus(registry.WithFieldManager(ctx, "kube-apiserver"), md.GetNamespace(), md.GetName(), rq, false)
	return err
}
