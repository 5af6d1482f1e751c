package admission

import (
	"strings"
	"testing"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/kubelet/internal/resource"
)

type podBuilder struct{ pod *corev1.Pod }

func makePod(name string) *podBuilder {
	return &podBuilder{&corev1.Pod{Metadata: &metav1.ObjectMeta{Name: name}, Spec: &corev1.PodSpec{
		Containers: []*corev1.Container{{Name: "c", Resources: &corev1.ResourceRequirements{Requests: map[string]string{}}}},
	}}}
}

func (b *podBuilder) req(name, q string) *podBuilder {
	b.pod.Spec.Containers[0].Resources.Requests[name] = q
	return b
}

func (b *podBuilder) hostPort(port int32) *podBuilder {
	c := b.pod.Spec.Containers[0]
	c.Ports = append(c.Ports, &corev1.ContainerPort{ContainerPort: 80, HostPort: port})
	return b
}

func (b *podBuilder) obj() *corev1.Pod { return b.pod }

var node = resource.List{resource.CPU: 2000, resource.Memory: 4 << 30, resource.Pods: 3}

func TestAdmit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pod    *corev1.Pod
		active []*corev1.Pod
		reason string
	}{
		{"a pod that fits is admitted", makePod("p").req("cpu", "500m").obj(), nil, ""},
		{"cpu beyond allocatable is OutOfcpu", makePod("p").req("cpu", "1500m").obj(),
			[]*corev1.Pod{makePod("a").req("cpu", "1").obj()}, "OutOfcpu"},
		{"memory beyond allocatable is OutOfmemory", makePod("p").req("memory", "5Gi").obj(), nil, "OutOfmemory"},
		{"more pods than allowed is OutOfpods", makePod("p").obj(),
			[]*corev1.Pod{makePod("a").obj(), makePod("b").obj(), makePod("c").obj()}, "OutOfpods"},
		{"a taken hostPort is NodePorts", makePod("p").hostPort(8080).obj(),
			[]*corev1.Pod{makePod("a").hostPort(8080).obj()}, "NodePorts"},
		{"another hostPort is fine", makePod("p").hostPort(8081).obj(),
			[]*corev1.Pod{makePod("a").hostPort(8080).obj()}, ""},
		{"an extended resource the node lacks is rejected", makePod("p").req("example.com/gpu", "1").obj(), nil, "OutOfexample.com/gpu"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Admit(tc.pod, node, tc.active)
			if tc.reason == "" {
				if !got.Admit {
					t.Fatalf("rejected: %+v", got)
				}
				return
			}
			if got.Admit || got.Reason != tc.reason || !strings.HasPrefix(got.Message, "Pod was rejected:") {
				t.Fatalf("got %+v, want reason %s", got, tc.reason)
			}
		})
	}
}
