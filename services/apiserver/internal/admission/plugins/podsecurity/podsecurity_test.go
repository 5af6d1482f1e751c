package podsecurity

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/proto/apis"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/admission"
)

func plainSpec() *corev1.PodSpec {
	return &corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{},
		Containers: []*corev1.Container{{Name: "web", Image: "web:1"}}}
}

func restrictedSpec() *corev1.PodSpec {
	s := plainSpec()
	s.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: proto.Bool(true), SeccompProfile: &corev1.SeccompProfile{Type: "RuntimeDefault"}}
	s.Containers[0].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: proto.Bool(false),
		Capabilities: &corev1.Capabilities{Drop: []string{"ALL"}, Add: []string{"NET_BIND_SERVICE"}}}
	return s
}

func TestEvaluate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		level Level
		mut   func(s *corev1.PodSpec)
		want  []string
	}{
		{name: "plain pod is baseline", level: Baseline, mut: func(*corev1.PodSpec) {}},
		{name: "plain pod is not restricted", level: Restricted, mut: func(*corev1.PodSpec) {}, want: []string{
			`allowPrivilegeEscalation != false (container "web" must set securityContext.allowPrivilegeEscalation=false)`,
			`unrestricted capabilities (container "web" must set securityContext.capabilities.drop=["ALL"])`,
			`runAsNonRoot != true (pod or container "web" must set securityContext.runAsNonRoot=true)`,
			`seccompProfile (pod or container "web" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`,
		}},
		{name: "privileged, host network, hostPath, hostPort", level: Baseline, mut: func(s *corev1.PodSpec) {
			s.HostNetwork = true
			s.Volumes = []*corev1.Volume{{Name: "root", HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}
			s.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: proto.Bool(true), Capabilities: &corev1.Capabilities{Add: []string{"NET_ADMIN"}}}
			s.Containers[0].Ports = []*corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
		}, want: []string{
			`non-default capabilities (container "web" must not include "NET_ADMIN" in securityContext.capabilities.add)`,
			`host namespaces (hostNetwork=true)`,
			`hostPath volumes (volume "root")`,
			`hostPort (container "web" uses hostPort 8080)`,
			`privileged (container "web" must not set securityContext.privileged=true)`,
		}},
		{name: "two containers named together", level: Restricted, mut: func(s *corev1.PodSpec) {
			*s = *restrictedSpec()
			s.Containers = append(s.Containers, &corev1.Container{Name: "side", Image: "x", SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: proto.Bool(true), Capabilities: &corev1.Capabilities{Drop: []string{"ALL"}}}},
				&corev1.Container{Name: "log", Image: "x", SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Drop: []string{"ALL"}}}})
		}, want: []string{`allowPrivilegeEscalation != false (containers "side", "log" must set securityContext.allowPrivilegeEscalation=false)`}},
		{name: "restricted pod passes", level: Restricted, mut: func(s *corev1.PodSpec) { *s = *restrictedSpec() }},
		{name: "root user", level: Restricted, mut: func(s *corev1.PodSpec) {
			*s = *restrictedSpec()
			s.SecurityContext.RunAsUser = proto.Int64(0)
		}, want: []string{"runAsUser=0 (pod must not set runAsUser=0)"}},
		{name: "unsafe sysctl", level: Baseline, mut: func(s *corev1.PodSpec) {
			s.SecurityContext.Sysctls = []*corev1.Sysctl{{Name: "kernel.msgmax", Value: "1"}}
		}, want: []string{"forbidden sysctls (kernel.msgmax)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := plainSpec()
			tc.mut(s)
			got := Evaluate(tc.level, s)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("reasons:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestModes(t *testing.T) {
	pods, _ := apis.Lookup("", "pods")
	deployments, _ := apis.Lookup("apps", "deployments")
	ns := func(name string, labels map[string]string) *corev1.Namespace {
		return &corev1.Namespace{Metadata: &metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	p := New(admission.NewMemory("", "namespaces",
		ns("strict", map[string]string{LabelPrefix + ModeEnforce: "restricted"}),
		ns("warned", map[string]string{LabelPrefix + ModeWarn: "restricted", LabelPrefix + ModeWarn + "-version": "v1.30"}),
		ns("open", nil),
	), nil)
	pod := &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: "x"}, Spec: plainSpec()}
	deploy := &appsv1.Deployment{Spec: &appsv1.DeploymentSpec{Template: &corev1.PodTemplateSpec{Spec: plainSpec()}}}

	a := &admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "strict", Name: "x", Object: pod}
	err := p.Validate(context.Background(), a)
	if !apierrors.IsForbidden(err) || !strings.HasPrefix(err.Error(), `pods "x" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "web"`) {
		t.Fatalf("enforce: %v", err)
	}
	a = &admission.Attributes{Operation: admission.Create, Resource: deployments, Namespace: "strict", Name: "d", Object: deploy}
	if err := p.Validate(context.Background(), a); err != nil || len(a.Warnings()) != 0 {
		t.Fatalf("enforce on a template: %v, warnings %v; want admitted silently", err, a.Warnings())
	}
	for _, obj := range []struct {
		res  apis.Resource
		body any
	}{{pods, pod}, {deployments, deploy}} {
		a = &admission.Attributes{Operation: admission.Create, Resource: obj.res, Namespace: "warned", Name: "x", Object: obj.body.(interface {
			proto.Message
			GetMetadata() *metav1.ObjectMeta
		})}
		if err := p.Validate(context.Background(), a); err != nil {
			t.Fatalf("warn mode refused: %v", err)
		}
		if w := a.Warnings(); len(w) != 1 || !strings.HasPrefix(w[0], `would violate PodSecurity "restricted:v1.30": allowPrivilegeEscalation != false`) {
			t.Fatalf("warnings = %q", w)
		}
	}
	a = &admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "open", Name: "x", Object: pod}
	if err := p.Validate(context.Background(), a); err != nil || len(a.Warnings()) > 0 {
		t.Fatalf("unlabelled namespace: %v %v", err, a.Warnings())
	}
}

func TestNamespaceLabels(t *testing.T) {
	namespaces, _ := apis.Lookup("", "namespaces")
	for _, tc := range []struct {
		labels map[string]string
		want   string
	}{
		{labels: map[string]string{LabelPrefix + ModeEnforce: "restricted", LabelPrefix + ModeEnforce + "-version": "v1.30"}},
		{labels: map[string]string{LabelPrefix + ModeWarn: "strict", LabelPrefix + ModeAudit + "-version": "1.30"},
			want: `Namespace "ns" is invalid: [metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "strict": must be one of privileged, baseline, restricted, ` +
				`metadata.labels[pod-security.kubernetes.io/audit-version]: Invalid value: "1.30": must be 'latest' or 'v1.x']`},
	} {
		ns := &corev1.Namespace{Metadata: &metav1.ObjectMeta{Name: "ns", Labels: tc.labels}}
		a := &admission.Attributes{Operation: admission.Create, Resource: namespaces, Name: "ns", Object: ns}
		err := New(admission.NewMemory("", "namespaces"), nil).Validate(context.Background(), a)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v refused: %v", tc.labels, err)
		case tc.want != "" && (!apierrors.IsInvalid(err) || err.Error() != tc.want):
			t.Errorf("%v: err = %v\nwant %s", tc.labels, err, tc.want)
		}
	}
}

func TestStricterEnforceWarnsAboutExistingPods(t *testing.T) {
	namespaces, _ := apis.Lookup("", "namespaces")
	pod := func(name string, spec *corev1.PodSpec) *corev1.Pod {
		return &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: name, Namespace: "team"}, Spec: spec}
	}
	privileged := plainSpec()
	privileged.HostNetwork = true
	pods := admission.NewMemory("", "pods", pod("a", plainSpec()), pod("b", plainSpec()), pod("c", privileged), pod("d", restrictedSpec()))
	p := New(admission.NewMemory("", "namespaces"), pods)
	old := &corev1.Namespace{Metadata: &metav1.ObjectMeta{Name: "team"}}
	next := &corev1.Namespace{Metadata: &metav1.ObjectMeta{Name: "team", Labels: map[string]string{LabelPrefix + ModeEnforce: "baseline"}}}
	a := &admission.Attributes{Operation: admission.Update, Resource: namespaces, Name: "team", Object: next, OldObject: old}
	if err := p.Validate(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	want := []string{`existing pods in namespace "team" violate the new PodSecurity enforce level "baseline:latest"`, `c: host namespaces (hostNetwork=true)`}
	if strings.Join(a.Warnings(), "\n") != strings.Join(want, "\n") {
		t.Fatalf("warnings %q, want %q", a.Warnings(), want)
	}
	next.Metadata.Labels[LabelPrefix+ModeEnforce] = "restricted"
	a = &admission.Attributes{Operation: admission.Update, Resource: namespaces, Name: "team", Object: next, OldObject: old}
	if err := p.Validate(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if w := a.Warnings(); len(w) != 3 || !strings.HasPrefix(w[1], "a (and 1 other pod): allowPrivilegeEscalation != false") || !strings.HasPrefix(w[2], "c: allowPrivilegeEscalation") {
		t.Fatalf("warnings %q", w)
	}
	same := &admission.Attributes{Operation: admission.Update, Resource: namespaces, Name: "team", Object: next, OldObject: next}
	if err := p.Validate(context.Background(), same); err != nil || len(same.Warnings()) > 0 {
		t.Fatalf("unchanged labels: %v %q", err, same.Warnings())
	}
}
