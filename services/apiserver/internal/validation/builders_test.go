package validation

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/field"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// validPodSpec is a pod spec as defaulting leaves it: every rule passes.
func validPodSpec() *corev1.PodSpec {
	return &corev1.PodSpec{
		RestartPolicy: "Always", DnsPolicy: "ClusterFirst", SchedulerName: "default-scheduler",
		TerminationGracePeriodSeconds: proto.Int64(30),
		Containers: []*corev1.Container{{
			Name: "web", Image: "web:1.0", ImagePullPolicy: "IfNotPresent", TerminationMessagePolicy: "File",
			Ports: []*corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: "TCP"}},
			Resources: &corev1.ResourceRequirements{
				Requests: map[string]string{"cpu": "100m", "memory": "64Mi"},
				Limits:   map[string]string{"cpu": "500m", "memory": "128Mi"},
			},
		}},
	}
}

func validDeployment() *appsv1.Deployment {
	return &appsv1.Deployment{
		Metadata: &metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: &appsv1.DeploymentSpec{
			Replicas: proto.Int32(2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: &corev1.PodTemplateSpec{Metadata: &metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: validPodSpec()},
			Strategy: &appsv1.DeploymentStrategy{Type: "RollingUpdate", RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxSurge: &metav1.IntOrString{Type: 1, StrVal: "25%"}, MaxUnavailable: &metav1.IntOrString{Type: 1, StrVal: "25%"}}},
			RevisionHistoryLimit: proto.Int32(10), ProgressDeadlineSeconds: proto.Int32(600),
		},
	}
}

// fields lists "path: Type" of each error, sorted, for comparing with a table.
func fields(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Field + ": " + e.Type.String()
	}
	slices.Sort(out)
	return out
}

func expectFields(t *testing.T, errs field.ErrorList, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := fields(errs); !slices.Equal(got, want) {
		t.Errorf("errors:\n  got  %s\n  want %s\n  (%v)", strings.Join(got, "\n       "), strings.Join(want, "\n       "), errs)
	}
}
