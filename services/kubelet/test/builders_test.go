package test

import (
	"google.golang.org/protobuf/proto"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// podBuilder builds pods for tests: makePod("web").node("n1").obj().
type podBuilder struct{ pod *corev1.Pod }

func makePod(name string) *podBuilder {
	return &podBuilder{&corev1.Pod{
		Metadata: &metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": name}},
		Spec:     &corev1.PodSpec{TerminationGracePeriodSeconds: proto.Int64(2)},
	}}
}

func (b *podBuilder) node(n string) *podBuilder { b.pod.Spec.NodeName = n; return b }

func (b *podBuilder) container(name, image string, args ...string) *podBuilder {
	b.pod.Spec.Containers = append(b.pod.Spec.Containers, &corev1.Container{Name: name, Image: image, Args: args})
	return b
}

func (b *podBuilder) command(cmd ...string) *podBuilder {
	b.last().Command = cmd
	return b
}

func (b *podBuilder) initContainer(name, image string, cmd ...string) *podBuilder {
	b.pod.Spec.InitContainers = append(b.pod.Spec.InitContainers, &corev1.Container{Name: name, Image: image, Command: cmd})
	return b
}

func (b *podBuilder) last() *corev1.Container {
	return b.pod.Spec.Containers[len(b.pod.Spec.Containers)-1]
}

func (b *podBuilder) port(p int32) *podBuilder {
	b.last().Ports = append(b.last().Ports, &corev1.ContainerPort{ContainerPort: p, Protocol: "TCP"})
	return b
}

func (b *podBuilder) hostPort(p int32) *podBuilder {
	b.last().Ports = append(b.last().Ports, &corev1.ContainerPort{ContainerPort: p, HostPort: p, Protocol: "TCP"})
	return b
}

func (b *podBuilder) requests(cpu, memory string) *podBuilder {
	b.last().Resources = &corev1.ResourceRequirements{Requests: map[string]string{"cpu": cpu, "memory": memory}}
	return b
}

func (b *podBuilder) env(name, value string) *podBuilder {
	b.last().Env = append(b.last().Env, &corev1.EnvVar{Name: name, Value: value})
	return b
}

func httpGet(path string, port int32) *corev1.Probe {
	return &corev1.Probe{HttpGet: &corev1.HTTPGetAction{Path: path, Port: &metav1.IntOrString{IntVal: port}}}
}

func execProbe(cmd ...string) *corev1.Probe {
	return &corev1.Probe{Exec: &corev1.ExecAction{Command: cmd}}
}

func (b *podBuilder) liveness(p *corev1.Probe, period, failures int32) *podBuilder {
	p.PeriodSeconds, p.FailureThreshold = period, failures
	b.last().LivenessProbe = p
	return b
}

func (b *podBuilder) readiness(p *corev1.Probe, period int32) *podBuilder {
	p.PeriodSeconds = period
	b.last().ReadinessProbe = p
	return b
}

func (b *podBuilder) restartPolicy(p string) *podBuilder { b.pod.Spec.RestartPolicy = p; return b }

func (b *podBuilder) pullPolicy(p string) *podBuilder { b.last().ImagePullPolicy = p; return b }

func (b *podBuilder) annotate(k, v string) *podBuilder {
	if b.pod.Metadata.Annotations == nil {
		b.pod.Metadata.Annotations = map[string]string{}
	}
	b.pod.Metadata.Annotations[k] = v
	return b
}

func (b *podBuilder) obj() *corev1.Pod { return b.pod }
