package nodestatus

import (
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/kubelet/internal/resource"
	"podline.dev/services/kubelet/internal/runtime"
)

// MaxImages is how many images a Node lists, as Kubernetes' default.
const MaxImages = 50

// Input is what a Node's status is built from.
type Input struct {
	Capacity resource.List
	Reserved resource.List
	// Pressure signals.
	MemoryPressure, DiskPressure, PIDPressure bool
	// NotReady, when not empty, is why the node is not ready (the runtime
	// or the network is down).
	NotReady    string
	Addresses   []*corev1.NodeAddress
	KubeletPort int32
	Info        *corev1.NodeSystemInfo
	Images      []*runtime.Image
	Now         time.Time
}

// Allocatable is capacity minus what is reserved.
func Allocatable(capacity, reserved resource.List) resource.List {
	out := resource.List{}
	for k, v := range capacity {
		out[k] = max(v-reserved[k], 0)
	}
	return out
}

// BuildStatus derives a Node's status; prev (may be nil) keeps condition
// transition times stable.
func BuildStatus(prev *corev1.NodeStatus, in Input) *corev1.NodeStatus {
	st := &corev1.NodeStatus{
		Capacity:        in.Capacity.Strings(),
		Allocatable:     Allocatable(in.Capacity, in.Reserved).Strings(),
		Addresses:       in.Addresses,
		DaemonEndpoints: &corev1.NodeDaemonEndpoints{KubeletEndpoint: &corev1.DaemonEndpoint{Port: in.KubeletPort}},
		NodeInfo:        in.Info,
		Images:          images(in.Images),
	}
	old := map[string]*corev1.NodeCondition{}
	for _, c := range prev.GetConditions() {
		old[c.GetType()] = c
	}
	now := &metav1.Time{Seconds: in.Now.Unix()}
	cond := func(typ string, on bool, trueReason, trueMsg, falseReason, falseMsg string) *corev1.NodeCondition {
		c := &corev1.NodeCondition{Type: typ, Status: "False", Reason: falseReason, Message: falseMsg, LastHeartbeatTime: now, LastTransitionTime: now}
		if on {
			c.Status, c.Reason, c.Message = "True", trueReason, trueMsg
		}
		if p := old[typ]; p != nil && p.GetStatus() == c.Status && p.GetLastTransitionTime() != nil {
			c.LastTransitionTime = p.GetLastTransitionTime()
		}
		return c
	}
	notReadyMsg := in.NotReady
	st.Conditions = []*corev1.NodeCondition{
		cond("MemoryPressure", in.MemoryPressure, "KubeletHasInsufficientMemory", "kubelet has insufficient memory available",
			"KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
		cond("DiskPressure", in.DiskPressure, "KubeletHasDiskPressure", "kubelet has disk pressure",
			"KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
		cond("PIDPressure", in.PIDPressure, "KubeletHasInsufficientPID", "kubelet has insufficient PID available",
			"KubeletHasSufficientPID", "kubelet has sufficient PID available"),
		cond("Ready", in.NotReady == "", "KubeletReady", "kubelet is posting ready status",
			"KubeletNotReady", notReadyMsg),
	}
	return st
}

// images lists the largest images first, digests before tags, at most MaxImages.
func images(in []*runtime.Image) []*corev1.ContainerImage {
	sorted := append([]*runtime.Image(nil), in...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Size > sorted[j].Size })
	var out []*corev1.ContainerImage
	for _, img := range sorted {
		if len(out) == MaxImages {
			break
		}
		names := append(append([]string(nil), img.RepoDigests...), img.RepoTags...)
		if len(names) == 0 {
			continue
		}
		out = append(out, &corev1.ContainerImage{Names: names, SizeBytes: img.Size})
	}
	return out
}

// Changed reports whether two statuses differ beyond heartbeat times.
func Changed(a, b *corev1.NodeStatus) bool {
	return !proto.Equal(withoutHeartbeats(a), withoutHeartbeats(b))
}

func withoutHeartbeats(st *corev1.NodeStatus) *corev1.NodeStatus {
	if st == nil {
		return nil
	}
	c := proto.Clone(st).(*corev1.NodeStatus)
	for _, cond := range c.Conditions {
		cond.LastHeartbeatTime = nil
	}
	return c
}

// ParseTaints reads --register-with-taints: "key=value:Effect,key:Effect".
func ParseTaints(s string) ([]*corev1.Taint, error) {
	var out []*corev1.Taint
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		kv, effect, ok := strings.Cut(part, ":")
		if !ok {
			return nil, &taintError{part}
		}
		switch effect {
		case "NoSchedule", "PreferNoSchedule", "NoExecute":
		default:
			return nil, &taintError{part}
		}
		key, value, _ := strings.Cut(kv, "=")
		if key == "" {
			return nil, &taintError{part}
		}
		out = append(out, &corev1.Taint{Key: key, Value: value, Effect: effect})
	}
	return out, nil
}

type taintError struct{ spec string }

func (e *taintError) Error() string {
	return "invalid taint " + e.spec + `: want "key[=value]:NoSchedule|PreferNoSchedule|NoExecute"`
}
