package kuberuntime

import (
	"maps"
	"sync"

	"podline.dev/services/kubelet/internal/status"
)

// Waiting reasons a sync leaves on containers it could not start.
const (
	ReasonContainerCreating  = "ContainerCreating"
	ReasonErrImagePull       = "ErrImagePull"
	ReasonImagePullBackOff   = "ImagePullBackOff"
	ReasonErrImageNeverPull  = "ErrImageNeverPull"
	ReasonInvalidImageName   = "InvalidImageName"
	ReasonCrashLoopBackOff   = "CrashLoopBackOff"
	ReasonCreateContainerErr = "CreateContainerError"
	ReasonCreateConfigErr    = "CreateContainerConfigError"
	ReasonRunContainerError  = "RunContainerError"
)

// ReasonCache keeps, by pod UID and container name, why the last sync did
// not start a container; the status shows it as the waiting reason.
type ReasonCache struct {
	mu sync.RWMutex
	m  map[string]map[string]status.Waiting
}

// NewReasonCache returns an empty cache.
func NewReasonCache() *ReasonCache { return &ReasonCache{m: map[string]map[string]status.Waiting{}} }

// Set records why a container waits.
func (c *ReasonCache) Set(uid, name, reason, message string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m[uid] == nil {
		c.m[uid] = map[string]status.Waiting{}
	}
	c.m[uid][name] = status.Waiting{Reason: reason, Message: message}
}

// Clear forgets a container's reason (it started).
func (c *ReasonCache) Clear(uid, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m[uid], name)
}

// Get returns a copy of a pod's reasons.
func (c *ReasonCache) Get(uid string) map[string]status.Waiting {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return maps.Clone(c.m[uid])
}

// Forget drops a pod.
func (c *ReasonCache) Forget(uid string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, uid)
}
