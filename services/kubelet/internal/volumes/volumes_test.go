package volumes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/kubelet/internal/fieldpath"
)

type fakeSource struct {
	cms     map[string]*corev1.ConfigMap
	secrets map[string]*corev1.Secret
}

func (f *fakeSource) ConfigMap(_ context.Context, ns, name string) (*corev1.ConfigMap, error) {
	if cm := f.cms[ns+"/"+name]; cm != nil {
		return cm, nil
	}
	return nil, apierrors.NewNotFound(apierrors.GroupResource{Resource: "configmaps"}, name)
}

func (f *fakeSource) Secret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	if s := f.secrets[ns+"/"+name]; s != nil {
		return s, nil
	}
	return nil, apierrors.NewNotFound(apierrors.GroupResource{Resource: "secrets"}, name)
}

// fakeTokens issues "token-1", "token-2", ... and records what was asked.
type fakeTokens struct {
	issued    int
	asked     []string // pod name, audience, seconds
	forgotten []string
	err       error
}

func (f *fakeTokens) PodToken(_ context.Context, pod *corev1.Pod, audience string, seconds int64) ([]byte, error) {
	if f.err != nil {
		return nil, f.err
	}
	f.issued++
	f.asked = append(f.asked, fmt.Sprintf("%s %q %d", pod.GetMetadata().GetName(), audience, seconds))
	return fmt.Appendf(nil, "token-%d", f.issued), nil
}

func (f *fakeTokens) ForgetPod(uid string) { f.forgotten = append(f.forgotten, uid) }

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSetUpWritesEveryKindOfVolume(t *testing.T) {
	root := t.TempDir()
	src := &fakeSource{
		cms:     map[string]*corev1.ConfigMap{"default/cfg": {Data: map[string]string{"app.conf": "port=8080", "other": "x"}}},
		secrets: map[string]*corev1.Secret{"default/creds": {Data: map[string][]byte{"password": []byte("s3cret")}}},
	}
	tokens := &fakeTokens{}
	m := NewManager(root, src, tokens, slog.New(slog.NewTextHandler(io.Discard, nil)))
	hostDir := filepath.Join(t.TempDir(), "made")
	pod := &corev1.Pod{
		Metadata: &metav1.ObjectMeta{Name: "web", Namespace: "default", Uid: "u1", Labels: map[string]string{"app": "web"}},
		Spec: &corev1.PodSpec{
			ServiceAccountName: "builder",
			Containers:         []*corev1.Container{{Name: "c", Resources: &corev1.ResourceRequirements{Limits: map[string]string{"memory": "64Mi"}}}},
			Volumes: []*corev1.Volume{
				{Name: "scratch", EmptyDir: &corev1.EmptyDirVolumeSource{}},
				{Name: "host", HostPath: &corev1.HostPathVolumeSource{Path: hostDir, Type: proto.String("DirectoryOrCreate")}},
				{Name: "cfg", ConfigMap: &corev1.ConfigMapVolumeSource{Name: "cfg", Items: []*corev1.KeyToPath{{Key: "app.conf", Path: "conf/app.conf"}}}},
				{Name: "creds", Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: proto.Int32(0o400)}},
				{Name: "info", DownwardApi: &corev1.DownwardAPIVolumeSource{Items: []*corev1.DownwardAPIVolumeFile{
					{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
					{Path: "mem", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "c", Resource: "limits.memory", Divisor: "1Mi"}},
				}}},
				{Name: "token", Projected: &corev1.ProjectedVolumeSource{Sources: []*corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: proto.Int64(3607)}},
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "vault-token", Audience: "vault"}},
					{ConfigMap: &corev1.ConfigMapProjection{Name: "cfg", Items: []*corev1.KeyToPath{{Key: "other", Path: "ca.crt"}}}},
					{DownwardApi: &corev1.DownwardAPIProjection{Items: []*corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
				}}},
			},
		},
	}
	paths, err := m.SetUp(context.Background(), pod, fieldpath.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(paths["scratch"]); err != nil || !st.IsDir() || !strings.HasPrefix(paths["scratch"], root) {
		t.Fatalf("emptyDir %s: %v", paths["scratch"], err)
	}
	if st, err := os.Stat(hostDir); err != nil || !st.IsDir() || paths["host"] != hostDir {
		t.Fatalf("hostPath DirectoryOrCreate: %v", err)
	}
	if got := read(t, filepath.Join(paths["cfg"], "conf/app.conf")); got != "port=8080" {
		t.Fatalf("configMap item %q", got)
	}
	if _, err := os.Stat(filepath.Join(paths["cfg"], "other")); !os.IsNotExist(err) {
		t.Fatal("a key not in items was written")
	}
	p := filepath.Join(paths["creds"], "password")
	if st, _ := os.Stat(p); read(t, p) != "s3cret" || st.Mode().Perm() != 0o400 {
		t.Fatalf("secret file mode %v", st.Mode())
	}
	if read(t, filepath.Join(paths["info"], "name")) != "web" || read(t, filepath.Join(paths["info"], "mem")) != "64" {
		t.Fatal("downwardAPI files")
	}
	if read(t, filepath.Join(paths["token"], "token")) != "token-1" || read(t, filepath.Join(paths["token"], "vault-token")) != "token-2" ||
		read(t, filepath.Join(paths["token"], "ca.crt")) != "x" || read(t, filepath.Join(paths["token"], "namespace")) != "default" {
		t.Fatal("projected files")
	}
	if want := []string{`web "" 3607`, `web "vault" 3600`}; !slices.Equal(tokens.asked, want) {
		t.Fatalf("tokens asked %q, want %q", tokens.asked, want)
	}

	// A changed ConfigMap is rewritten on the next SetUp.
	src.cms["default/cfg"] = &corev1.ConfigMap{Data: map[string]string{"app.conf": "port=9090", "other": "x"}}
	if _, err := m.SetUp(context.Background(), pod, fieldpath.Env{}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(paths["cfg"], "conf/app.conf")); got != "port=9090" {
		t.Fatalf("configMap not refreshed: %q", got)
	}
	// So is a token the token manager renewed.
	if got := read(t, filepath.Join(paths["token"], "token")); got != "token-3" {
		t.Fatalf("token not refreshed: %q", got)
	}
	// A token that cannot be had fails the volume.
	tokens.err = errors.New("apiserver unreachable")
	if _, err := m.SetUp(context.Background(), pod, fieldpath.Env{}); err == nil ||
		!strings.Contains(err.Error(), `MountVolume.SetUp failed for volume "token" : failed to fetch token: apiserver unreachable`) {
		t.Fatalf("err = %v", err)
	}

	if err := m.TearDown("u1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m.PodDir("u1")); !os.IsNotExist(err) {
		t.Fatal("pod directory left")
	}
	if !slices.Equal(tokens.forgotten, []string{"u1"}) {
		t.Fatalf("tokens forgotten for %v", tokens.forgotten)
	}
}

func TestSetUpFailsOnAMissingConfigMapUnlessOptional(t *testing.T) {
	m := NewManager(t.TempDir(), &fakeSource{}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	pod := &corev1.Pod{Metadata: &metav1.ObjectMeta{Namespace: "default", Uid: "u"}, Spec: &corev1.PodSpec{Volumes: []*corev1.Volume{
		{Name: "cfg", ConfigMap: &corev1.ConfigMapVolumeSource{Name: "missing"}},
	}}}
	_, err := m.SetUp(context.Background(), pod, fieldpath.Env{})
	if err == nil || !strings.Contains(err.Error(), `MountVolume.SetUp failed for volume "cfg" : configmap "missing" not found`) {
		t.Fatalf("err %v", err)
	}
	pod.Spec.Volumes[0].ConfigMap.Optional = proto.Bool(true)
	if _, err := m.SetUp(context.Background(), pod, fieldpath.Env{}); err != nil {
		t.Fatal(err)
	}
}

func TestHostPathTypeIsChecked(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	_ = os.WriteFile(f, nil, 0o644)
	err := checkHostPath(&corev1.HostPathVolumeSource{Path: f, Type: proto.String("Directory")})
	if !errors.Is(err, ErrHostPathType) {
		t.Fatalf("a file as Directory: %v", err)
	}
	if err := checkHostPath(&corev1.HostPathVolumeSource{Path: f, Type: proto.String("File")}); err != nil {
		t.Fatal(err)
	}
}
