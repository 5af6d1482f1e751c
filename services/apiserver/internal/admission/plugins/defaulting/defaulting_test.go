package defaulting

import (
	"context"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	"podline.dev/proto/apis"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/admission"
)

func TestPullPolicyFollowsTheTag(t *testing.T) {
	for image, want := range map[string]string{
		"nginx":                             "Always",
		"nginx:latest":                      "Always",
		"nginx:1.27":                        "IfNotPresent",
		"registry.podline:5000/demo/web":    "Always",
		"registry.podline:5000/demo/web:1":  "IfNotPresent",
		"registry.podline:5000/web:latest":  "Always",
		"nginx@sha256:0123456789abcdef":     "IfNotPresent",
		"nginx:latest@sha256:0123456789abc": "IfNotPresent",
	} {
		if got := PullPolicy(image); got != want {
			t.Errorf("PullPolicy(%q) = %q, want %q", image, got, want)
		}
	}
}

func TestPodDefaults(t *testing.T) {
	pod := &corev1.Pod{Spec: &corev1.PodSpec{
		ServiceAccount: "builder",
		Containers: []*corev1.Container{{
			Name: "web", Image: "web:1.0",
			Ports:          []*corev1.ContainerPort{{ContainerPort: 80}},
			Resources:      &corev1.ResourceRequirements{Limits: map[string]string{"cpu": "500m"}},
			ReadinessProbe: &corev1.Probe{HttpGet: &corev1.HTTPGetAction{Port: &metav1.IntOrString{IntVal: 80}}},
			Env:            []*corev1.EnvVar{{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
		}},
		Volumes: []*corev1.Volume{{Name: "scratch"}, {Name: "cfg", ConfigMap: &corev1.ConfigMapVolumeSource{Name: "c"}}},
	}}
	Apply(pod)
	s := pod.Spec
	c := s.Containers[0]
	checks := []struct {
		what      string
		got, want any
	}{
		{"restartPolicy", s.RestartPolicy, "Always"},
		{"dnsPolicy", s.DnsPolicy, "ClusterFirst"},
		{"terminationGracePeriodSeconds", s.GetTerminationGracePeriodSeconds(), int64(30)},
		{"schedulerName", s.SchedulerName, "default-scheduler"},
		{"enableServiceLinks", s.GetEnableServiceLinks(), true},
		{"securityContext set", s.SecurityContext != nil, true},
		{"serviceAccountName from the alias", s.ServiceAccountName, "builder"},
		{"imagePullPolicy", c.ImagePullPolicy, "IfNotPresent"},
		{"port protocol", c.Ports[0].Protocol, "TCP"},
		{"terminationMessagePath", c.TerminationMessagePath, "/dev/termination-log"},
		{"terminationMessagePolicy", c.TerminationMessagePolicy, "File"},
		{"requests from limits", c.Resources.Requests["cpu"], "500m"},
		{"probe period", c.ReadinessProbe.PeriodSeconds, int32(10)},
		{"probe timeout", c.ReadinessProbe.TimeoutSeconds, int32(1)},
		{"probe failureThreshold", c.ReadinessProbe.FailureThreshold, int32(3)},
		{"httpGet path", c.ReadinessProbe.HttpGet.Path, "/"},
		{"httpGet scheme", c.ReadinessProbe.HttpGet.Scheme, "HTTP"},
		{"fieldRef apiVersion", c.Env[0].ValueFrom.FieldRef.ApiVersion, "v1"},
		{"sourceless volume is emptyDir", s.Volumes[0].EmptyDir != nil, true},
		{"configMap defaultMode", s.Volumes[1].ConfigMap.GetDefaultMode(), int32(0o644)},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s = %v, want %v", ck.what, ck.got, ck.want)
		}
	}
}

func TestDefaultsKeepWhatTheUserSet(t *testing.T) {
	pod := &corev1.Pod{Spec: &corev1.PodSpec{
		RestartPolicy: "Never", DnsPolicy: "Default", SchedulerName: "mine",
		TerminationGracePeriodSeconds: proto.Int64(0), EnableServiceLinks: proto.Bool(false),
		Containers: []*corev1.Container{{Name: "a", Image: "a", ImagePullPolicy: "Never",
			Ports: []*corev1.ContainerPort{{ContainerPort: 53, Protocol: "UDP"}}}},
	}}
	want := proto.Clone(pod).(*corev1.Pod)
	Apply(pod)
	if pod.Spec.RestartPolicy != "Never" || pod.Spec.DnsPolicy != "Default" || pod.Spec.SchedulerName != "mine" ||
		pod.Spec.GetTerminationGracePeriodSeconds() != 0 || pod.Spec.GetEnableServiceLinks() ||
		pod.Spec.Containers[0].ImagePullPolicy != "Never" || pod.Spec.Containers[0].Ports[0].Protocol != "UDP" {
		t.Fatalf("defaults overwrote set fields:\n got %v\nwant %v", pod.Spec, want.Spec)
	}
}

func TestDeploymentDefaults(t *testing.T) {
	d := &appsv1.Deployment{Spec: &appsv1.DeploymentSpec{Template: &corev1.PodTemplateSpec{
		Spec: &corev1.PodSpec{Containers: []*corev1.Container{{Name: "a", Image: "a"}}}}}}
	Apply(d)
	s := d.Spec
	if s.GetReplicas() != 1 || s.GetRevisionHistoryLimit() != 10 || s.GetProgressDeadlineSeconds() != 600 {
		t.Errorf("replicas/revisionHistoryLimit/progressDeadlineSeconds = %d/%d/%d, want 1/10/600",
			s.GetReplicas(), s.GetRevisionHistoryLimit(), s.GetProgressDeadlineSeconds())
	}
	ru := s.GetStrategy().GetRollingUpdate()
	if s.GetStrategy().GetType() != "RollingUpdate" || ru.GetMaxSurge().GetStrVal() != "25%" || ru.GetMaxUnavailable().GetStrVal() != "25%" {
		t.Errorf("strategy = %v, want RollingUpdate 25%%/25%%", s.GetStrategy())
	}
	if got := s.Template.Spec.Containers[0].ImagePullPolicy; got != "Always" {
		t.Errorf("template imagePullPolicy = %q, want Always (template defaulted)", got)
	}
	if s.Template.Spec.RestartPolicy != "Always" {
		t.Errorf("template restartPolicy = %q", s.Template.Spec.RestartPolicy)
	}
}

func TestReplicaSetAndServiceDefaults(t *testing.T) {
	rs := &appsv1.ReplicaSet{Spec: &appsv1.ReplicaSetSpec{}}
	Apply(rs)
	if rs.Spec.GetReplicas() != 1 {
		t.Errorf("replicaset replicas = %d, want 1", rs.Spec.GetReplicas())
	}
	svc := &corev1.Service{Spec: &corev1.ServiceSpec{Ports: []*corev1.ServicePort{{Port: 80}}}}
	Apply(svc)
	p := svc.Spec.Ports[0]
	if svc.Spec.Type != "ClusterIP" || svc.Spec.SessionAffinity != "None" || p.Protocol != "TCP" ||
		p.GetTargetPort().GetIntVal() != 80 || svc.Spec.GetInternalTrafficPolicy() != "Cluster" {
		t.Errorf("service defaults: %v", svc.Spec)
	}
}

func TestEndpointsPortsDefaultToTCP(t *testing.T) {
	ep := &corev1.Endpoints{Subsets: []*corev1.EndpointSubset{
		{Ports: []*corev1.EndpointPort{{Port: 80}, {Port: 53, Protocol: "UDP"}}},
		{Ports: []*corev1.EndpointPort{{Port: 8080}}},
	}}
	Apply(ep)
	var got []string
	for _, ss := range ep.Subsets {
		for _, p := range ss.Ports {
			got = append(got, p.Protocol)
		}
	}
	if fmt.Sprint(got) != "[TCP UDP TCP]" {
		t.Errorf("protocols = %v, want [TCP UDP TCP]", got)
	}
}

func TestAdmitReportsWhetherItChangedTheObject(t *testing.T) {
	res, _ := apis.Lookup("", "pods")
	pod := &corev1.Pod{Spec: &corev1.PodSpec{Containers: []*corev1.Container{{Name: "a", Image: "a"}}}}
	a := &admission.Attributes{Operation: admission.Create, Resource: res, Object: pod}
	if changed, err := New().Admit(context.Background(), a); err != nil || !changed {
		t.Fatalf("first Admit = %v, %v; want changed", changed, err)
	}
	if changed, err := New().Admit(context.Background(), a); err != nil || changed {
		t.Fatalf("second Admit = %v, %v; want unchanged (defaults are idempotent)", changed, err)
	}
}
