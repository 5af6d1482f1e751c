package proxier

import (
	"maps"
	"slices"
	"sync"

	corev1 "podline.dev/proto/core/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
)

// Source is what the proxier reads the cluster's Services and
// EndpointSlices from: the informers' caches in the proxy (informers.go),
// a MemorySource in tests. Objects are read-only.
type Source interface {
	// Services are every Service.
	Services() []*corev1.Service
	// Service is the Service namespace/name.
	Service(key string) (*corev1.Service, bool)
	// Slices are the EndpointSlices of the Service namespace/name (by
	// their kubernetes.io/service-name label).
	Slices(key string) []*discoveryv1.EndpointSlice
}

// SliceServiceKey is the namespace/name of the Service sl belongs to, or
// "" when it has no kubernetes.io/service-name label.
func SliceServiceKey(sl *discoveryv1.EndpointSlice) string {
	name := sl.GetMetadata().GetLabels()[LabelServiceName]
	if name == "" {
		return ""
	}
	return sl.GetMetadata().GetNamespace() + "/" + name
}

// MemorySource is a Source held in memory, for tests and benchmarks.
type MemorySource struct {
	mu       sync.Mutex
	services map[string]*corev1.Service
	slices   map[string]map[string]*discoveryv1.EndpointSlice // service key → slice name
}

var _ Source = (*MemorySource)(nil)

// NewMemorySource returns an empty MemorySource.
func NewMemorySource() *MemorySource {
	return &MemorySource{services: map[string]*corev1.Service{}, slices: map[string]map[string]*discoveryv1.EndpointSlice{}}
}

// SetService adds or replaces svc and returns its key.
func (m *MemorySource) SetService(svc *corev1.Service) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := svc.GetMetadata().GetNamespace() + "/" + svc.GetMetadata().GetName()
	m.services[key] = svc
	return key
}

// DeleteService removes the Service key.
func (m *MemorySource) DeleteService(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.services, key)
}

// SetSlice adds or replaces sl and returns its Service's key.
func (m *MemorySource) SetSlice(sl *discoveryv1.EndpointSlice) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := SliceServiceKey(sl)
	if m.slices[key] == nil {
		m.slices[key] = map[string]*discoveryv1.EndpointSlice{}
	}
	m.slices[key][sl.GetMetadata().GetName()] = sl
	return key
}

// DeleteSlice removes the slice name of the Service key.
func (m *MemorySource) DeleteSlice(key, name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.slices[key], name)
}

func (m *MemorySource) Services() []*corev1.Service {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Collect(maps.Values(m.services))
}

func (m *MemorySource) Service(key string) (*corev1.Service, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	svc, ok := m.services[key]
	return svc, ok
}

func (m *MemorySource) Slices(key string) []*discoveryv1.EndpointSlice {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Collect(maps.Values(m.slices[key]))
}
