package kuberuntime

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/kubelet/internal/envvars"
	"podline.dev/services/kubelet/internal/fieldpath"
	"podline.dev/services/kubelet/internal/resource"
	"podline.dev/services/kubelet/internal/runtime"
	"podline.dev/services/kubelet/internal/staticpods"
)

// ContainerHash identifies a container's spec: a running container whose
// hash differs from its spec's is restarted.
func ContainerHash(c *corev1.Container) string {
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(c)
	h := fnv.New32a()
	_, _ = h.Write(b)
	return strconv.FormatUint(uint64(h.Sum32()), 16)
}

// LogDir is where a pod's container logs go: <logs>/<ns>_<name>_<uid>
// (logs is /var/log/pods on a node).
func LogDir(logs string, pod *corev1.Pod) string {
	md := pod.GetMetadata()
	return filepath.Join(logs, md.GetNamespace()+"_"+md.GetName()+"_"+md.GetUid())
}

// LogPath is one container instance's log file, relative to the pod's
// LogDir: <container>/<restart count>.log.
func LogPath(container string, attempt int) string {
	return filepath.Join(container, strconv.Itoa(attempt)+".log")
}

// Resources turns a container's requests and limits into cgroup settings.
func Resources(c *corev1.Container) runtime.Resources {
	req, lim := resource.ContainerRequests(c), resource.ContainerLimits(c)
	var r runtime.Resources
	cpuReq := req[resource.CPU]
	r.CPUShares = max(uint64(cpuReq)*1024/1000, 2)
	if cpuLim := lim[resource.CPU]; cpuLim > 0 {
		r.CPUPeriod = 100_000
		r.CPUQuota = max(cpuLim*100_000/1000, 1000)
	}
	r.MemoryLimit = lim[resource.Memory]
	return r
}

// containerEnv builds a container's environment as the kubelet does:
// envFrom first, then env, with $(VAR) references to earlier variables and
// to the Service variables expanded, then the Service variables the
// container did not set itself.
func (m *Manager) containerEnv(ctx context.Context, pod *corev1.Pod, c *corev1.Container, fenv fieldpath.Env) ([]string, error) {
	ns := pod.GetMetadata().GetNamespace()
	svcVars, err := m.serviceEnv(pod)
	if err != nil {
		return nil, err
	}
	vars := map[string]string{}
	for _, v := range svcVars {
		vars[v.Name] = v.Value
	}
	own := map[string]bool{}
	var order []string
	put := func(k, v string) {
		if !own[k] {
			own[k] = true
			order = append(order, k)
		}
		vars[k] = v
	}
	for _, from := range c.GetEnvFrom() {
		switch {
		case from.GetConfigMapRef() != nil:
			ref := from.GetConfigMapRef()
			cm, err := m.source.ConfigMap(ctx, ns, ref.GetName())
			if err != nil {
				if apierrors.IsNotFound(err) && ref.GetOptional() {
					continue
				}
				return nil, fmt.Errorf("configmap %q not found", ref.GetName())
			}
			for _, k := range sortedKeys(cm.GetData()) {
				put(from.GetPrefix()+k, cm.GetData()[k])
			}
		case from.GetSecretRef() != nil:
			ref := from.GetSecretRef()
			s, err := m.source.Secret(ctx, ns, ref.GetName())
			if err != nil {
				if apierrors.IsNotFound(err) && ref.GetOptional() {
					continue
				}
				return nil, fmt.Errorf("secret %q not found", ref.GetName())
			}
			keys := make([]string, 0, len(s.GetData()))
			for k := range s.GetData() {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				put(from.GetPrefix()+k, string(s.GetData()[k]))
			}
		}
	}
	for _, e := range c.GetEnv() {
		if e.GetValueFrom() == nil {
			put(e.GetName(), Expand(e.GetValue(), mapping(vars)))
			continue
		}
		v, skip, err := m.envValue(ctx, pod, c, e.GetValueFrom(), fenv)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.GetName(), err)
		}
		if !skip {
			put(e.GetName(), v)
		}
	}
	out := make([]string, 0, len(order)+len(svcVars))
	for _, k := range order {
		out = append(out, k+"="+vars[k])
	}
	for _, v := range svcVars {
		if !own[v.Name] {
			out = append(out, v.Name+"="+v.Value)
		}
	}
	return out, nil
}

// serviceEnv is the Service variables of pod's containers
// (enableServiceLinks defaults to true). A static pod does not wait for the
// Services to be read, as it runs without an apiserver; it gets those
// read so far.
func (m *Manager) serviceEnv(pod *corev1.Pod) ([]envvars.Var, error) {
	if m.services == nil {
		return nil, nil
	}
	svcs, err := m.services.ListServices()
	if err != nil && !staticpods.IsStatic(pod) {
		return nil, err
	}
	links := pod.GetSpec().EnableServiceLinks == nil || pod.GetSpec().GetEnableServiceLinks()
	return envvars.ForPod(pod.GetMetadata().GetNamespace(), links, svcs), nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func mapping(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

func (m *Manager) envValue(ctx context.Context, pod *corev1.Pod, c *corev1.Container, src *corev1.EnvVarSource, fenv fieldpath.Env) (string, bool, error) {
	ns := pod.GetMetadata().GetNamespace()
	switch {
	case src.GetFieldRef() != nil:
		v, err := fieldpath.FieldValue(pod, src.GetFieldRef().GetFieldPath(), fenv)
		return v, false, err
	case src.GetResourceFieldRef() != nil:
		ref := src.GetResourceFieldRef()
		target := c
		if ref.GetContainerName() != "" {
			for _, other := range slices.Concat(pod.GetSpec().GetContainers(), pod.GetSpec().GetInitContainers()) {
				if other.GetName() == ref.GetContainerName() {
					target = other
				}
			}
		}
		v, err := fieldpath.ResourceValue(target, ref.GetResource(), ref.GetDivisor(), fenv)
		return v, false, err
	case src.GetConfigMapKeyRef() != nil:
		ref := src.GetConfigMapKeyRef()
		cm, err := m.source.ConfigMap(ctx, ns, ref.GetName())
		if err != nil {
			if apierrors.IsNotFound(err) && ref.GetOptional() {
				return "", true, nil
			}
			return "", false, fmt.Errorf("configmap %q not found", ref.GetName())
		}
		v, ok := cm.GetData()[ref.GetKey()]
		if !ok {
			if ref.GetOptional() {
				return "", true, nil
			}
			return "", false, fmt.Errorf("couldn't find key %s in ConfigMap %s/%s", ref.GetKey(), ns, ref.GetName())
		}
		return v, false, nil
	case src.GetSecretKeyRef() != nil:
		ref := src.GetSecretKeyRef()
		s, err := m.source.Secret(ctx, ns, ref.GetName())
		if err != nil {
			if apierrors.IsNotFound(err) && ref.GetOptional() {
				return "", true, nil
			}
			return "", false, fmt.Errorf("secret %q not found", ref.GetName())
		}
		v, ok := s.GetData()[ref.GetKey()]
		if !ok {
			if ref.GetOptional() {
				return "", true, nil
			}
			return "", false, fmt.Errorf("couldn't find key %s in Secret %s/%s", ref.GetKey(), ns, ref.GetName())
		}
		return string(v), false, nil
	}
	return "", true, nil
}

// containerMounts binds the pod's volumes (and its /etc/hosts) into a container.
func containerMounts(pod *corev1.Pod, c *corev1.Container, volumes map[string]string, etcHosts string) ([]runtime.Mount, error) {
	var out []runtime.Mount
	hasHosts := false
	for _, vm := range c.GetVolumeMounts() {
		host, ok := volumes[vm.GetName()]
		if !ok {
			return nil, fmt.Errorf("volume %q of container %s is not in the pod", vm.GetName(), c.GetName())
		}
		if sp := vm.GetSubPath(); sp != "" {
			clean := filepath.Clean(sp)
			if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
				return nil, fmt.Errorf("subPath %q is not a relative path within the volume", sp)
			}
			host = filepath.Join(host, clean)
			if err := ensureSubPath(host); err != nil {
				return nil, err
			}
		}
		if vm.GetMountPath() == "/etc/hosts" {
			hasHosts = true
		}
		out = append(out, runtime.Mount{HostPath: host, ContainerPath: vm.GetMountPath(), ReadOnly: vm.GetReadOnly() || readOnlyVolume(pod, vm.GetName())})
	}
	if etcHosts != "" && !hasHosts && !pod.GetSpec().GetHostNetwork() {
		out = append(out, runtime.Mount{HostPath: etcHosts, ContainerPath: "/etc/hosts"})
	}
	return out, nil
}

// readOnlyVolume: configMap, secret, downwardAPI and projected volumes are
// mounted read-only, as in Kubernetes.
func readOnlyVolume(pod *corev1.Pod, name string) bool {
	for _, v := range pod.GetSpec().GetVolumes() {
		if v.GetName() == name {
			return v.GetConfigMap() != nil || v.GetSecret() != nil || v.GetDownwardApi() != nil || v.GetProjected() != nil
		}
	}
	return false
}

// ensureSubPath makes a subPath exist as a directory when it is missing.
func ensureSubPath(p string) error {
	if _, err := os.Stat(p); os.IsNotExist(err) {
		return os.MkdirAll(p, 0o755)
	}
	return nil
}

// PodLogDir is the pod's log directory on this node.
func (m *Manager) PodLogDir(pod *corev1.Pod) string { return LogDir(m.logsDir, pod) }
