package serviceaccount

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/object"
	"podline.dev/proto/apis"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/admission"
)

func podWith(mut func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: &corev1.PodSpec{
		InitContainers: []*corev1.Container{{Name: "init", Image: "i"}},
		Containers:     []*corev1.Container{{Name: "a", Image: "a"}, {Name: "b", Image: "b"}},
	}}
	if mut != nil {
		mut(p)
	}
	return p
}

func TestServiceAccount(t *testing.T) {
	pods, _ := apis.Lookup("", "pods")
	accounts := admission.NewMemory("", "serviceaccounts",
		&corev1.ServiceAccount{Metadata: &metav1.ObjectMeta{Name: "default", Namespace: "default"}},
		&corev1.ServiceAccount{Metadata: &metav1.ObjectMeta{Name: "builder", Namespace: "default"}},
		&corev1.ServiceAccount{Metadata: &metav1.ObjectMeta{Name: "quiet", Namespace: "default"}, AutomountServiceAccountToken: proto.Bool(false)})
	p := New(accounts)
	p.suffix = func() string { return "x2kqp" }
	for _, tc := range []struct {
		name      string
		pod       *corev1.Pod
		op        admission.Operation
		wantSA    string
		wantMount bool
	}{
		{name: "default account and token volume", pod: podWith(nil), op: admission.Create, wantSA: "default", wantMount: true},
		{name: "named account kept", pod: podWith(func(p *corev1.Pod) { p.Spec.ServiceAccountName = "builder" }), op: admission.Create, wantSA: "builder", wantMount: true},
		{name: "pod turns automount off", pod: podWith(func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = proto.Bool(false) }), op: admission.Create, wantSA: "default"},
		{name: "account turns automount off", pod: podWith(func(p *corev1.Pod) { p.Spec.ServiceAccountName = "quiet" }), op: admission.Create, wantSA: "quiet"},
		{name: "existing mount at the token path", pod: podWith(func(p *corev1.Pod) {
			p.Spec.Containers[0].VolumeMounts = []*corev1.VolumeMount{{Name: "own", MountPath: MountPath}}
		}), op: admission.Create, wantSA: "default"},
		{name: "mirror pod untouched", pod: podWith(func(p *corev1.Pod) { p.Metadata.Annotations = map[string]string{MirrorPodAnnotation: "x"} }), op: admission.Create},
		{name: "update untouched", pod: podWith(nil), op: admission.Update},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &admission.Attributes{Operation: tc.op, Resource: pods, Namespace: "default", Name: "p", Object: tc.pod}
			if _, err := p.Admit(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			s := tc.pod.Spec
			if s.ServiceAccountName != tc.wantSA || s.ServiceAccount != tc.wantSA {
				t.Errorf("serviceAccountName/serviceAccount = %q/%q, want %q", s.ServiceAccountName, s.ServiceAccount, tc.wantSA)
			}
			var vol *corev1.Volume
			for _, v := range s.Volumes {
				if v.Name == "kube-api-access-x2kqp" {
					vol = v
				}
			}
			if (vol != nil) != tc.wantMount {
				t.Fatalf("token volume present = %v, want %v", vol != nil, tc.wantMount)
			}
			if !tc.wantMount {
				return
			}
			src := vol.GetProjected().GetSources()
			if len(src) != 3 || src[0].GetServiceAccountToken().GetExpirationSeconds() != 3607 ||
				src[1].GetConfigMap().GetName() != "kube-root-ca.crt" ||
				src[2].GetDownwardApi().GetItems()[0].GetFieldRef().GetFieldPath() != "metadata.namespace" {
				t.Errorf("volume sources = %v", src)
			}
			for _, c := range append(s.InitContainers, s.Containers...) {
				m := c.VolumeMounts[len(c.VolumeMounts)-1]
				if m.Name != vol.Name || m.MountPath != MountPath || !m.ReadOnly {
					t.Errorf("container %s mount = %v", c.Name, m)
				}
			}
		})
	}
}

// lateAccounts has no ServiceAccount for its first misses reads, as a
// namespace whose default account the controller is still creating.
type lateAccounts struct {
	*admission.Memory
	misses, reads int
}

func (l *lateAccounts) Get(ctx context.Context, namespace, name string) (object.Object, error) {
	l.reads++
	if l.reads <= l.misses {
		return nil, apierrors.NewNotFound(apierrors.GroupResource{Resource: "serviceaccounts"}, name)
	}
	return l.Memory.Get(ctx, namespace, name)
}

func TestMissingAccountIsRefused(t *testing.T) {
	pods, _ := apis.Lookup("", "pods")
	for _, tc := range []struct {
		name      string
		pod       *corev1.Pod
		misses    int
		wantReads int
		want      string
	}{
		{name: "named account missing: one read", pod: podWith(func(p *corev1.Pod) { p.Spec.ServiceAccountName = "builder" }), misses: 100, wantReads: 1,
			want: `pods "p" is forbidden: error looking up service account team/builder: serviceaccount "builder" not found`},
		{name: "default account missing: read again, then refused", pod: podWith(nil), misses: 100, wantReads: DefaultAttempts,
			want: `pods "p" is forbidden: error looking up service account team/default: serviceaccount "default" not found`},
		{name: "default account appears while waiting", pod: podWith(nil), misses: 3, wantReads: 4},
		{name: "mirror pod needs none", pod: podWith(func(p *corev1.Pod) { p.Metadata.Annotations = map[string]string{MirrorPodAnnotation: "x"} }), misses: 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			accounts := &lateAccounts{misses: tc.misses, Memory: admission.NewMemory("", "serviceaccounts",
				&corev1.ServiceAccount{Metadata: &metav1.ObjectMeta{Name: "default", Namespace: "team"}},
				&corev1.ServiceAccount{Metadata: &metav1.ObjectMeta{Name: "builder", Namespace: "team"}})}
			p := New(accounts)
			p.retryInterval = time.Millisecond
			tc.pod.Metadata.Namespace = "team"
			a := &admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "team", Name: "p", Object: tc.pod}
			_, err := p.Admit(context.Background(), a)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (!apierrors.IsForbidden(err) || err.Error() != tc.want):
				t.Fatalf("err = %v\nwant %s", err, tc.want)
			}
			if accounts.reads != tc.wantReads {
				t.Errorf("%d reads, want %d", accounts.reads, tc.wantReads)
			}
		})
	}
}
