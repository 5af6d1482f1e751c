package fieldpath

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/kubelet/internal/resource"
)

// Env is what the pod's fields resolve against beyond the pod itself.
type Env struct {
	PodIPs  []string
	HostIPs []string
	// NodeAllocatable bounds limits a container does not set.
	NodeAllocatable resource.List
}

// FieldValue is the value of a pod field by path.
func FieldValue(pod *corev1.Pod, path string, env Env) (string, error) {
	md := pod.GetMetadata()
	if key, ok := subscript(path, "metadata.labels"); ok {
		return md.GetLabels()[key], nil
	}
	if key, ok := subscript(path, "metadata.annotations"); ok {
		return md.GetAnnotations()[key], nil
	}
	switch path {
	case "metadata.name":
		return md.GetName(), nil
	case "metadata.namespace":
		return md.GetNamespace(), nil
	case "metadata.uid":
		return md.GetUid(), nil
	case "metadata.labels":
		return formatMap(md.GetLabels()), nil
	case "metadata.annotations":
		return formatMap(md.GetAnnotations()), nil
	case "spec.nodeName":
		return pod.GetSpec().GetNodeName(), nil
	case "spec.serviceAccountName":
		return pod.GetSpec().GetServiceAccountName(), nil
	case "status.hostIP":
		return first(env.HostIPs), nil
	case "status.hostIPs":
		return strings.Join(env.HostIPs, ","), nil
	case "status.podIP":
		return first(env.PodIPs), nil
	case "status.podIPs":
		return strings.Join(env.PodIPs, ","), nil
	}
	return "", fmt.Errorf("%w: %q", ErrUnsupported, path)
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// subscript reads "prefix['key']".
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"[")
	if !ok || !strings.HasSuffix(rest, "]") {
		return "", false
	}
	key := strings.TrimSuffix(rest, "]")
	return strings.Trim(key, `'"`), true
}

// formatMap writes labels as the downward API does: key="value" lines, sorted.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s=%s", k, strconv.Quote(m[k]))
	}
	return b.String()
}

// ResourceValue is a container's resource ("limits.cpu", "requests.memory")
// divided by divisor (default 1), rounded up; limits not set read as the
// node's allocatable.
func ResourceValue(c *corev1.Container, res, divisor string, env Env) (string, error) {
	kind, name, ok := strings.Cut(res, ".")
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrUnsupported, res)
	}
	var list resource.List
	switch kind {
	case "limits":
		list = resource.ContainerLimits(c)
	case "requests":
		list = resource.ContainerRequests(c)
	default:
		return "", fmt.Errorf("%w: %q", ErrUnsupported, res)
	}
	v, set := list[name]
	if !set && kind == "limits" {
		v = env.NodeAllocatable[name]
	}
	if divisor == "" {
		divisor = "1"
	}
	d, err := resource.Amount(name, divisor)
	if err != nil || d == 0 {
		return "", fmt.Errorf("invalid divisor %q", divisor)
	}
	return strconv.FormatInt(int64(math.Ceil(float64(v)/float64(d))), 10), nil
}
