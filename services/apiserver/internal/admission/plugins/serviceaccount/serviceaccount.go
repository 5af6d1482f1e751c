// Package serviceaccount is the mutating plugin that gives every new pod a
// service account ("default" unless it names one) and, unless automounting
// is turned off on the pod or its ServiceAccount, the projected token
// volume kube-api-access-<suffix> mounted read-only at
// /var/run/secrets/kubernetes.io/serviceaccount in every container, in the
// shape Kubernetes mounts it: a service account token, the cluster CA from
// the kube-root-ca.crt ConfigMap, and the namespace.
//
// As in Kubernetes, a pod whose ServiceAccount does not exist is refused
// (403 "error looking up service account <ns>/<name>: serviceaccount
// "<name>" not found"); the controller-manager's serviceaccount controller
// makes every namespace's "default", and since a namespace made a moment
// ago may not have it yet, a missing "default" is read again for about
// 1.5 s before the pod is refused. Mirror pods get no account. The
// controller-manager's root-ca-cert-publisher publishes kube-root-ca.crt
// in every namespace; the volume's ConfigMap source stays optional, as
// podline's one difference, so that pods still start where the
// controller-manager runs without --root-ca-file. The kubelet fills the
// token source with a token from the TokenRequest API, bound to the pod.
package serviceaccount

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"time"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/internal/admission"
)

// Name is the plugin's name in spans.
const Name = "ServiceAccount"

// Kubernetes' names and paths for the token volume.
const (
	DefaultServiceAccount = "default"
	VolumePrefix          = "kube-api-access-"
	MountPath             = "/var/run/secrets/kubernetes.io/serviceaccount"
	RootCAConfigMap       = "kube-root-ca.crt"
	// TokenExpirationSeconds is what Kubernetes requests: an hour plus 7 s,
	// so that the kubelet can tell its tokens from user-requested ones.
	TokenExpirationSeconds = 3607
	// MirrorPodAnnotation marks a kubelet's mirror pod, which gets no account.
	MirrorPodAnnotation = "kubernetes.io/config.mirror"
)

// How long a pod waits for its namespace's default account: Kubernetes
// reads it up to 10 times, 100-200 ms apart.
const (
	DefaultAttempts      = 10
	DefaultRetryInterval = 150 * time.Millisecond
)

// Plugin mutates pod creates.
type Plugin struct {
	accounts      admission.Getter
	suffix        func() string
	retryInterval time.Duration
}

var _ admission.Mutator = (*Plugin)(nil)

// New returns the plugin reading ServiceAccounts from accounts (nil: none
// are looked up, every pod automounts).
func New(accounts admission.Getter) *Plugin {
	return &Plugin{accounts: accounts, suffix: randomSuffix, retryInterval: DefaultRetryInterval}
}

// Name implements admission.Mutator.
func (*Plugin) Name() string { return Name }

// Admit implements admission.Mutator.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) (bool, error) {
	if a.Operation != admission.Create || !a.Is("", "Pod") {
		return false, nil
	}
	pod := a.Object.(*corev1.Pod)
	if _, mirror := pod.GetMetadata().GetAnnotations()[MirrorPodAnnotation]; mirror {
		return false, nil
	}
	if pod.Spec == nil {
		pod.Spec = &corev1.PodSpec{}
	}
	s := pod.Spec
	changed := false
	if s.ServiceAccountName == "" {
		s.ServiceAccountName, s.ServiceAccount = DefaultServiceAccount, DefaultServiceAccount
		changed = true
	}
	if s.ServiceAccount == "" {
		s.ServiceAccount = s.ServiceAccountName
		changed = true
	}
	automount, err := p.automount(ctx, a, s)
	if err != nil {
		return changed, err
	}
	if !automount || hasTokenMount(s) {
		return changed, nil
	}
	name := VolumePrefix + p.suffix()
	s.Volumes = append(s.Volumes, TokenVolume(name))
	mount := &corev1.VolumeMount{Name: name, ReadOnly: true, MountPath: MountPath}
	for _, c := range s.InitContainers {
		c.VolumeMounts = append(c.VolumeMounts, proto.Clone(mount).(*corev1.VolumeMount))
	}
	for _, c := range s.Containers {
		c.VolumeMounts = append(c.VolumeMounts, proto.Clone(mount).(*corev1.VolumeMount))
	}
	return true, nil
}

// automount looks the pod's ServiceAccount up, refusing the pod when it
// does not exist, and decides as Kubernetes does: the pod's setting wins,
// then the ServiceAccount's, then true.
func (p *Plugin) automount(ctx context.Context, a *admission.Attributes, s *corev1.PodSpec) (bool, error) {
	if p.accounts == nil {
		return s.AutomountServiceAccountToken == nil || *s.AutomountServiceAccountToken, nil
	}
	obj, err := p.account(ctx, a.Namespace, s.ServiceAccountName)
	if err != nil {
		if apierrors.IsNotFound(err) {
			err = a.Forbidden(fmt.Sprintf("error looking up service account %s/%s: %v", a.Namespace, s.ServiceAccountName, err))
		}
		return false, err
	}
	if s.AutomountServiceAccountToken != nil {
		return *s.AutomountServiceAccountToken, nil
	}
	if obj.AutomountServiceAccountToken != nil {
		return *obj.AutomountServiceAccountToken, nil
	}
	return true, nil
}

// account reads the ServiceAccount namespace/name. The default account
// of a namespace made a moment ago may not exist yet (the serviceaccount
// controller makes it), so, as Kubernetes does, a missing "default" is
// looked for again, DefaultAttempts times in all, before the pod is
// refused.
func (p *Plugin) account(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	attempts := 1
	if name == DefaultServiceAccount {
		attempts = DefaultAttempts
	}
	for i := range attempts {
		if i > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(p.retryInterval):
			}
		}
		obj, err := p.accounts.Get(ctx, namespace, name)
		if err == nil {
			return obj.(*corev1.ServiceAccount), nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	return nil, apierrors.NewNotFound(apierrors.GroupResource{Resource: "serviceaccount"}, name)
}

// hasTokenMount reports whether some container already mounts something
// at the token path, which Kubernetes leaves alone.
func hasTokenMount(s *corev1.PodSpec) bool {
	for _, cs := range [][]*corev1.Container{s.InitContainers, s.Containers} {
		for _, c := range cs {
			for _, m := range c.VolumeMounts {
				if m.MountPath == MountPath {
					return true
				}
			}
		}
	}
	return false
}

// TokenVolume is the projected volume Kubernetes mounts for the token.
func TokenVolume(name string) *corev1.Volume {
	return &corev1.Volume{Name: name, Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: proto.Int32(0o644),
		Sources: []*corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: proto.Int64(TokenExpirationSeconds), Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{Name: RootCAConfigMap, Optional: proto.Bool(true),
				Items: []*corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardApi: &corev1.DownwardAPIProjection{Items: []*corev1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{ApiVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}}
}

// randomSuffix is 5 characters from Kubernetes' generateName alphabet.
func randomSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	var b [5]byte
	for i := range b {
		b[i] = alphabet[mrand.IntN(len(alphabet))]
	}
	return string(b[:])
}
