package volumes

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"podline.dev/pkg/apierrors"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/kubelet/internal/fieldpath"
)

// Source reads the objects volumes are made from.
type Source interface {
	ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// Tokens issues the tokens of serviceAccountToken projections (the
// kubelet's token manager, asking the TokenRequest API).
type Tokens interface {
	// PodToken is a token of pod's account bound to pod, for audience
	// ("": the apiserver's), asked to live expirationSeconds; the same
	// token while it is fresh, a new one from 80% of its life on.
	PodToken(ctx context.Context, pod *corev1.Pod, audience string, expirationSeconds int64) ([]byte, error)
	// ForgetPod drops the tokens of the Pod with uid.
	ForgetPod(uid string)
}

// defaultTokenSeconds is a projection's lifetime when it names none.
const defaultTokenSeconds = 3600

// Manager sets up and tears down pod volumes.
type Manager struct {
	root   string
	source Source
	tokens Tokens
	log    *slog.Logger
}

// NewManager keeps pod volumes under root (the kubelet's root directory).
// tokens may be nil (a kubelet without an apiserver's REST address): the
// token files are then unsigned placeholders.
func NewManager(root string, source Source, tokens Tokens, log *slog.Logger) *Manager {
	return &Manager{root: root, source: source, tokens: tokens, log: log}
}

// PodDir is <root>/pods/<uid>.
func (m *Manager) PodDir(uid string) string { return filepath.Join(m.root, "pods", uid) }

// Dir is where a volume of one plugin lives.
func (m *Manager) Dir(uid, plugin, name string) string {
	return filepath.Join(m.PodDir(uid), "volumes", plugin, name)
}

// Plugin directory names, as the kubelet's.
const (
	pluginEmptyDir  = "kubernetes.io~empty-dir"
	pluginConfigMap = "kubernetes.io~configmap"
	pluginSecret    = "kubernetes.io~secret"
	pluginDownward  = "kubernetes.io~downward-api"
	pluginProjected = "kubernetes.io~projected"
)

// SetUp prepares every volume of pod and returns each one's host path.
func (m *Manager) SetUp(ctx context.Context, pod *corev1.Pod, env fieldpath.Env) (map[string]string, error) {
	paths := make(map[string]string, len(pod.GetSpec().GetVolumes()))
	for _, v := range pod.GetSpec().GetVolumes() {
		p, err := m.setUp(ctx, pod, v, env)
		if err != nil {
			return nil, fmt.Errorf("MountVolume.SetUp failed for volume %q : %w", v.GetName(), err)
		}
		paths[v.GetName()] = p
	}
	return paths, nil
}

func (m *Manager) setUp(ctx context.Context, pod *corev1.Pod, v *corev1.Volume, env fieldpath.Env) (string, error) {
	uid, ns := pod.GetMetadata().GetUid(), pod.GetMetadata().GetNamespace()
	switch {
	case v.GetHostPath() != nil:
		return v.GetHostPath().GetPath(), checkHostPath(v.GetHostPath())
	case v.GetEmptyDir() != nil:
		dir := m.Dir(uid, pluginEmptyDir, v.GetName())
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return "", err
		}
		_ = os.Chmod(dir, 0o777)
		if v.GetEmptyDir().GetMedium() == "Memory" {
			return dir, mountTmpfs(dir, v.GetEmptyDir().GetSizeLimit())
		}
		return dir, nil
	case v.GetConfigMap() != nil:
		src := v.GetConfigMap()
		files, err := m.configMapFiles(ctx, ns, src.GetName(), src.GetItems(), src.GetOptional(), mode(src.DefaultMode))
		if err != nil {
			return "", err
		}
		dir := m.Dir(uid, pluginConfigMap, v.GetName())
		return dir, writeFiles(dir, files)
	case v.GetSecret() != nil:
		src := v.GetSecret()
		files, err := m.secretFiles(ctx, ns, src.GetSecretName(), src.GetItems(), src.GetOptional(), mode(src.DefaultMode))
		if err != nil {
			return "", err
		}
		dir := m.Dir(uid, pluginSecret, v.GetName())
		return dir, writeFiles(dir, files)
	case v.GetDownwardApi() != nil:
		src := v.GetDownwardApi()
		files, err := downwardFiles(pod, src.GetItems(), mode(src.DefaultMode), env)
		if err != nil {
			return "", err
		}
		dir := m.Dir(uid, pluginDownward, v.GetName())
		return dir, writeFiles(dir, files)
	case v.GetProjected() != nil:
		files, err := m.projectedFiles(ctx, pod, v.GetProjected(), env)
		if err != nil {
			return "", err
		}
		dir := m.Dir(uid, pluginProjected, v.GetName())
		return dir, writeFiles(dir, files)
	case v.GetPersistentVolumeClaim() != nil:
		return "", fmt.Errorf("%w: persistentVolumeClaim", ErrUnsupported)
	}
	// A volume with no source is an emptyDir in Kubernetes' defaulting.
	dir := m.Dir(uid, pluginEmptyDir, v.GetName())
	return dir, os.MkdirAll(dir, 0o777)
}

func mode(p *int32) os.FileMode {
	if p == nil {
		return 0o644
	}
	return os.FileMode(*p) & os.ModePerm
}

// file is one file of a volume.
type file struct {
	data []byte
	mode os.FileMode
}

func project(data map[string][]byte, items []*corev1.KeyToPath, def os.FileMode, what string) (map[string]file, error) {
	out := map[string]file{}
	if len(items) == 0 {
		for k, v := range data {
			out[k] = file{v, def}
		}
		return out, nil
	}
	for _, it := range items {
		v, ok := data[it.GetKey()]
		if !ok {
			return nil, fmt.Errorf("configuration error: key %q not found in %s", it.GetKey(), what)
		}
		fm := def
		if it.Mode != nil {
			fm = os.FileMode(it.GetMode()) & os.ModePerm
		}
		out[it.GetPath()] = file{v, fm}
	}
	return out, nil
}

func (m *Manager) configMapFiles(ctx context.Context, ns, name string, items []*corev1.KeyToPath, optional bool, def os.FileMode) (map[string]file, error) {
	cm, err := m.source.ConfigMap(ctx, ns, name)
	if err != nil {
		if apierrors.IsNotFound(err) && optional {
			return map[string]file{}, nil
		}
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("configmap %q not found", name)
		}
		return nil, err
	}
	data := map[string][]byte{}
	for k, v := range cm.GetData() {
		data[k] = []byte(v)
	}
	for k, v := range cm.GetBinaryData() {
		data[k] = v
	}
	return project(data, items, def, "configmap "+name)
}

func (m *Manager) secretFiles(ctx context.Context, ns, name string, items []*corev1.KeyToPath, optional bool, def os.FileMode) (map[string]file, error) {
	s, err := m.source.Secret(ctx, ns, name)
	if err != nil {
		if apierrors.IsNotFound(err) && optional {
			return map[string]file{}, nil
		}
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("secret %q not found", name)
		}
		return nil, err
	}
	data := map[string][]byte{}
	for k, v := range s.GetData() {
		data[k] = v
	}
	for k, v := range s.GetStringData() {
		data[k] = []byte(v)
	}
	return project(data, items, def, "secret "+name)
}

func downwardFiles(pod *corev1.Pod, items []*corev1.DownwardAPIVolumeFile, def os.FileMode, env fieldpath.Env) (map[string]file, error) {
	out := map[string]file{}
	for _, it := range items {
		var v string
		var err error
		switch {
		case it.GetFieldRef() != nil:
			v, err = fieldpath.FieldValue(pod, it.GetFieldRef().GetFieldPath(), env)
		case it.GetResourceFieldRef() != nil:
			ref := it.GetResourceFieldRef()
			v, err = fieldpath.ResourceValue(containerNamed(pod, ref.GetContainerName()), ref.GetResource(), ref.GetDivisor(), env)
		default:
			err = fmt.Errorf("downwardAPI item %q has no source", it.GetPath())
		}
		if err != nil {
			return nil, err
		}
		fm := def
		if it.Mode != nil {
			fm = os.FileMode(it.GetMode()) & os.ModePerm
		}
		out[it.GetPath()] = file{[]byte(v), fm}
	}
	return out, nil
}

func containerNamed(pod *corev1.Pod, name string) *corev1.Container {
	for _, c := range append(append([]*corev1.Container{}, pod.GetSpec().GetContainers()...), pod.GetSpec().GetInitContainers()...) {
		if c.GetName() == name {
			return c
		}
	}
	return &corev1.Container{}
}

func (m *Manager) projectedFiles(ctx context.Context, pod *corev1.Pod, p *corev1.ProjectedVolumeSource, env fieldpath.Env) (map[string]file, error) {
	def := mode(p.DefaultMode)
	ns := pod.GetMetadata().GetNamespace()
	out := map[string]file{}
	merge := func(files map[string]file) {
		for k, v := range files {
			out[k] = v
		}
	}
	for _, s := range p.GetSources() {
		switch {
		case s.GetConfigMap() != nil:
			f, err := m.configMapFiles(ctx, ns, s.GetConfigMap().GetName(), s.GetConfigMap().GetItems(), s.GetConfigMap().GetOptional(), def)
			if err != nil {
				return nil, err
			}
			merge(f)
		case s.GetSecret() != nil:
			f, err := m.secretFiles(ctx, ns, s.GetSecret().GetName(), s.GetSecret().GetItems(), s.GetSecret().GetOptional(), def)
			if err != nil {
				return nil, err
			}
			merge(f)
		case s.GetDownwardApi() != nil:
			f, err := downwardFiles(pod, s.GetDownwardApi().GetItems(), def, env)
			if err != nil {
				return nil, err
			}
			merge(f)
		case s.GetServiceAccountToken() != nil:
			src := s.GetServiceAccountToken()
			path := src.GetPath()
			if path == "" {
				path = "token"
			}
			if _, ok := out[path]; ok {
				continue
			}
			if m.tokens == nil {
				out[path] = file{PlaceholderToken(pod, src.GetAudience()), def}
				continue
			}
			seconds := int64(defaultTokenSeconds)
			if src.ExpirationSeconds != nil {
				seconds = src.GetExpirationSeconds()
			}
			tok, err := m.tokens.PodToken(ctx, pod, src.GetAudience(), seconds)
			if err != nil {
				return nil, fmt.Errorf("failed to fetch token: %w", err)
			}
			out[path] = file{tok, def}
		}
	}
	return out, nil
}

// PlaceholderToken stands in for a service account token where the
// kubelet has no Tokens (no apiserver to ask): an unsigned JWT naming the
// service account, which no apiserver accepts.
func PlaceholderToken(pod *corev1.Pod, audience string) []byte {
	sa := pod.GetSpec().GetServiceAccountName()
	if sa == "" {
		sa = "default"
	}
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	claims := enc.EncodeToString(fmt.Appendf(nil, `{"iss":"podline","sub":"system:serviceaccount:%s:%s","aud":[%q],"kubernetes.io":{"namespace":%q,"pod":{"name":%q,"uid":%q},"serviceaccount":{"name":%q}}}`,
		pod.GetMetadata().GetNamespace(), sa, audience, pod.GetMetadata().GetNamespace(), pod.GetMetadata().GetName(), pod.GetMetadata().GetUid(), sa))
	return []byte(header + "." + claims + ".")
}

// writeFiles makes dir hold exactly files: changed ones are replaced by
// rename, stale ones removed.
func writeFiles(dir string, files map[string]file) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for rel, f := range files {
		clean := filepath.Clean(rel)
		if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return fmt.Errorf("invalid path %q", rel)
		}
		p := filepath.Join(dir, clean)
		if cur, err := os.ReadFile(p); err == nil && string(cur) == string(f.data) {
			if st, err := os.Stat(p); err == nil && st.Mode().Perm() == f.mode {
				continue
			}
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		tmp := p + ".podline-tmp"
		if err := os.WriteFile(tmp, f.data, f.mode); err != nil {
			return err
		}
		if err := os.Chmod(tmp, f.mode); err != nil {
			return err
		}
		if err := os.Rename(tmp, p); err != nil {
			return err
		}
	}
	// Remove files no longer projected (top level and nested).
	var stale []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if _, ok := files[rel]; !ok {
			stale = append(stale, p)
		}
		return nil
	})
	sort.Strings(stale)
	for _, p := range stale {
		_ = os.Remove(p)
	}
	return nil
}

func checkHostPath(hp *corev1.HostPathVolumeSource) error {
	p := hp.GetPath()
	st, err := os.Stat(p)
	switch hp.GetType() {
	case "", "Unset":
		return nil
	case "DirectoryOrCreate":
		if os.IsNotExist(err) {
			return os.MkdirAll(p, 0o755)
		}
		if err == nil && !st.IsDir() {
			return fmt.Errorf("%w: %s is not a directory", ErrHostPathType, p)
		}
		return err
	case "FileOrCreate":
		if os.IsNotExist(err) {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(p, os.O_CREATE|os.O_RDONLY, 0o644)
			if err != nil {
				return err
			}
			return f.Close()
		}
		if err == nil && st.IsDir() {
			return fmt.Errorf("%w: %s is a directory", ErrHostPathType, p)
		}
		return err
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrHostPathType, p, err)
	}
	var ok bool
	switch hp.GetType() {
	case "Directory":
		ok = st.IsDir()
	case "File":
		ok = st.Mode().IsRegular()
	case "Socket":
		ok = st.Mode()&os.ModeSocket != 0
	case "CharDevice":
		ok = st.Mode()&os.ModeCharDevice != 0
	case "BlockDevice":
		ok = st.Mode()&os.ModeDevice != 0 && st.Mode()&os.ModeCharDevice == 0
	default:
		return fmt.Errorf("%w: unknown type %q", ErrHostPathType, hp.GetType())
	}
	if !ok {
		return fmt.Errorf("%w: %s is not a %s", ErrHostPathType, p, hp.GetType())
	}
	return nil
}

func isTmpfs(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.TMPFS_MAGIC
}

func mountTmpfs(dir, sizeLimit string) error {
	if isTmpfs(dir) {
		return nil
	}
	opts := ""
	if sizeLimit != "" {
		opts = "size=" + sizeLimit
		if v, err := quantityBytes(sizeLimit); err == nil {
			opts = fmt.Sprintf("size=%d", v)
		}
	}
	return unix.Mount("tmpfs", dir, "tmpfs", 0, opts)
}

// TearDown unmounts and removes a pod's directory and forgets its tokens.
func (m *Manager) TearDown(uid string) error {
	if m.tokens != nil {
		m.tokens.ForgetPod(uid)
	}
	dir := m.PodDir(uid)
	vols := filepath.Join(dir, "volumes", pluginEmptyDir)
	entries, _ := os.ReadDir(vols)
	for _, e := range entries {
		p := filepath.Join(vols, e.Name())
		if isTmpfs(p) {
			if err := unix.Unmount(p, unix.MNT_DETACH); err != nil {
				return fmt.Errorf("unmount %s: %w", p, err)
			}
		}
	}
	return os.RemoveAll(dir)
}

// PodUIDs lists the pods that have a directory.
func (m *Manager) PodUIDs() []string {
	entries, _ := os.ReadDir(filepath.Join(m.root, "pods"))
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}
