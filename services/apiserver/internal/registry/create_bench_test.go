package registry_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"podline.dev/proto/apis"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/apiserver/internal/admission"
	"podline.dev/services/apiserver/internal/admission/plugins"
	"podline.dev/services/apiserver/internal/registry"
	"podline.dev/services/apiserver/internal/storage"
)

// BenchmarkCreatePod is the apiserver's storage side of a pod create, as
// bench-api's throughput run sends it (16 writers, the same pod), on an
// embedded etcd: managedFields, the whole admission chain over in-memory
// sources, validation and the etcd transaction. etcd runs in the process,
// so its CPU counts in ns/op too.
func BenchmarkCreatePod(b *testing.B) {
	etcd := apiservertest.StartEtcd(b)
	pods, _ := apis.Lookup("", "pods")
	chain := plugins.NewChain(plugins.Sources{
		Namespaces: admission.NewMemory("", "namespaces", &corev1.Namespace{Metadata: &metav1.ObjectMeta{Name: "default"}}),
		ServiceAccounts: admission.NewMemory("", "serviceaccounts",
			&corev1.ServiceAccount{Metadata: &metav1.ObjectMeta{Name: "default", Namespace: "default"}}),
		PriorityClasses:    admission.NewMemory("scheduling.k8s.io", "priorityclasses"),
		ResourceQuotas:     admission.NewMemory("", "resourcequotas"),
		LiveResourceQuotas: admission.NewMemory("", "resourcequotas"),
		Pods:               admission.NewMemory("", "pods"),
		CachedPods:         admission.NewMemory("", "pods"),
	})
	r, err := registry.New(pods, storage.NewStore(etcd.Client, 10*time.Second), registry.WithAdmission(chain))
	if err != nil {
		b.Fatal(err)
	}
	ctx := registry.WithFieldManager(context.Background(), "bench-api")
	var n atomic.Int64
	b.SetParallelism(8) // 16 writers on 2 CPUs
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := r.Create(ctx, "default", benchPod(fmt.Sprintf("p-%07d", n.Add(1))), false); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
}

// benchPod is bench-api's pod.
func benchPod(name string) *corev1.Pod {
	return &corev1.Pod{
		Metadata: &metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "tput", "tier": "bench"},
			Annotations: map[string]string{"bench.podline.dev/padding": strings.Repeat("x", 600)}},
		Spec: &corev1.PodSpec{Containers: []*corev1.Container{{Name: "web", Image: "registry.podline:5000/demo/web:1.0",
			Resources: &corev1.ResourceRequirements{Requests: map[string]string{"cpu": "100m", "memory": "64Mi"}}}}},
	}
}
