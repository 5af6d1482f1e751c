package staticpods

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"podline.dev/pkg/clock"
	"podline.dev/pkg/k8sjson"
	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// Annotations, as Kubernetes names them.
const (
	ConfigSourceAnnotation = "kubernetes.io/config.source"
	ConfigMirrorAnnotation = "kubernetes.io/config.mirror"
	ConfigHashAnnotation   = "kubernetes.io/config.hash"
	ConfigSeenAnnotation   = "kubernetes.io/config.seen"

	SourceFile = "file"
	SourceAPI  = "api"
)

// IsMirror reports whether a pod from the apiserver mirrors a static pod.
func IsMirror(pod *corev1.Pod) bool {
	_, ok := pod.GetMetadata().GetAnnotations()[ConfigMirrorAnnotation]
	return ok
}

// IsStatic reports whether a pod came from a file.
func IsStatic(pod *corev1.Pod) bool {
	return pod.GetMetadata().GetAnnotations()[ConfigSourceAnnotation] == SourceFile
}

// Parse reads one manifest (YAML or JSON) into the static pod for nodeName.
// warnings lists fields the kubelet does not know, which are dropped.
func Parse(data []byte, path, nodeName string) (pod *corev1.Pod, warnings []string, err error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	pod = &corev1.Pod{}
	warnings, err = k8sjson.Unmarshal(js, pod, k8sjson.Warn)
	if err != nil {
		return nil, warnings, fmt.Errorf("%s: %w", path, err)
	}
	if (pod.GetKind() != "" && pod.GetKind() != "Pod") || (pod.GetApiVersion() != "" && pod.GetApiVersion() != "v1") {
		return nil, warnings, fmt.Errorf("%s: %w (%s %s)", path, ErrNotAPod, pod.GetApiVersion(), pod.GetKind())
	}
	if pod.GetMetadata().GetName() == "" {
		return nil, warnings, fmt.Errorf("%s: metadata.name is required", path)
	}
	h := sha256.New()
	h.Write(js)
	fmt.Fprintf(h, "\nhost:%s\nfile:%s", nodeName, path)
	hash := hex.EncodeToString(h.Sum(nil))[:32]

	pod.ApiVersion, pod.Kind = "v1", "Pod"
	md := pod.Metadata
	md.Name = strings.ToLower(md.Name + "-" + nodeName)
	if md.Namespace == "" {
		md.Namespace = "default"
	}
	md.Uid = hash
	md.ResourceVersion = ""
	if md.Annotations == nil {
		md.Annotations = map[string]string{}
	}
	md.Annotations[ConfigHashAnnotation] = hash
	md.Annotations[ConfigSourceAnnotation] = SourceFile
	if pod.Spec == nil {
		pod.Spec = &corev1.PodSpec{}
	}
	pod.Spec.NodeName = nodeName
	// Static pods tolerate every NoExecute taint, as in Kubernetes.
	pod.Spec.Tolerations = append(pod.Spec.Tolerations, &corev1.Toleration{Operator: "Exists", Effect: "NoExecute"})
	pod.Status = &corev1.PodStatus{Phase: "Pending"}
	return pod, warnings, nil
}

// ReadDir parses every manifest in dir (*.yaml, *.yml, *.json; hidden
// files skipped) and returns the pods, sorted by name, and the errors of
// files that could not be read.
func ReadDir(dir, nodeName string) ([]*corev1.Pod, []error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, []error{err}
	}
	var pods []*corev1.Pod
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		switch strings.ToLower(filepath.Ext(name)) {
		case ".yaml", ".yml", ".json":
		default:
			continue
		}
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		pod, _, err := Parse(data, path, nodeName)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		pods = append(pods, pod)
	}
	sort.Slice(pods, func(i, j int) bool { return object.Key(pods[i]) < object.Key(pods[j]) })
	return pods, errs
}

// Source reports the static pods in a directory.
type Source struct {
	Dir      string
	NodeName string
	// Period is how often the directory is read (default 1 s).
	Period time.Duration
	Clock  clock.Clock
	Log    *slog.Logger
}

// Run reads the directory every period and calls onChange with the whole
// set of static pods whenever it differs from the last (and once at the
// start), until ctx ends.
func (s *Source) Run(ctx context.Context, onChange func([]*corev1.Pod)) {
	period := s.Period
	if period <= 0 {
		period = time.Second
	}
	var last string
	first := true
	reported := map[string]bool{}
	for {
		pods, errs := ReadDir(s.Dir, s.NodeName)
		for _, err := range errs {
			if !reported[err.Error()] {
				s.Log.Warn("static pod manifest", "err", err)
				reported[err.Error()] = true
			}
		}
		var keys []string
		for _, p := range pods {
			keys = append(keys, p.GetMetadata().GetUid())
		}
		sig := strings.Join(keys, ",")
		if first || sig != last {
			first, last = false, sig
			onChange(pods)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.Clock.After(period):
		}
	}
}

// Mirror is the mirror pod of a static pod on a node.
func Mirror(static *corev1.Pod, node *corev1.Node) *corev1.Pod {
	m := object.Copy(static)
	md := m.Metadata
	md.Uid, md.ResourceVersion, md.CreationTimestamp = "", "", nil
	md.Annotations[ConfigMirrorAnnotation] = md.Annotations[ConfigHashAnnotation]
	if node != nil && node.GetMetadata().GetUid() != "" {
		md.OwnerReferences = []*metav1.OwnerReference{{
			ApiVersion: "v1", Kind: "Node", Name: node.GetMetadata().GetName(), Uid: node.GetMetadata().GetUid(),
		}}
	}
	m.Status = nil
	return m
}

// MirrorHash is the static pod hash a mirror pod mirrors.
func MirrorHash(mirror *corev1.Pod) string {
	return mirror.GetMetadata().GetAnnotations()[ConfigMirrorAnnotation]
}
