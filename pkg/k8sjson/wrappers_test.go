package k8sjson

import (
	"google.golang.org/protobuf/proto"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// Builders for the API objects the tests use, after kube-scheduler's
// testing wrappers: makePod().name("web").container("nginx", "nginx:1.27").obj().

type podWrapper struct{ *corev1.Pod }

func makePod() *podWrapper {
	return &podWrapper{&corev1.Pod{ApiVersion: "v1", Kind: "Pod", Metadata: &metav1.ObjectMeta{}, Spec: &corev1.PodSpec{}}}
}

func (p *podWrapper) name(n string) *podWrapper      { p.Metadata.Name = n; return p }
func (p *podWrapper) namespace(n string) *podWrapper { p.Metadata.Namespace = n; return p }

func (p *podWrapper) label(k, v string) *podWrapper {
	if p.Metadata.Labels == nil {
		p.Metadata.Labels = map[string]string{}
	}
	p.Metadata.Labels[k] = v
	return p
}

func (p *podWrapper) container(name, image string) *podWrapper {
	p.Spec.Containers = append(p.Spec.Containers, &corev1.Container{Name: name, Image: image})
	return p
}

// port adds a container port to the last container.
func (p *podWrapper) port(name string, port int32) *podWrapper {
	c := p.Spec.Containers[len(p.Spec.Containers)-1]
	c.Ports = append(c.Ports, &corev1.ContainerPort{Name: name, ContainerPort: port, Protocol: "TCP"})
	return p
}

// requests sets the last container's resource requests.
func (p *podWrapper) requests(kv ...string) *podWrapper {
	c := p.Spec.Containers[len(p.Spec.Containers)-1]
	if c.Resources == nil {
		c.Resources = &corev1.ResourceRequirements{}
	}
	c.Resources.Requests = map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		c.Resources.Requests[kv[i]] = kv[i+1]
	}
	return p
}

func (p *podWrapper) emptyDir(name string) *podWrapper {
	p.Spec.Volumes = append(p.Spec.Volumes, &corev1.Volume{Name: name, EmptyDir: &corev1.EmptyDirVolumeSource{}})
	return p
}

func (p *podWrapper) node(n string) *podWrapper { p.Spec.NodeName = n; return p }

func (p *podWrapper) gracePeriod(s int64) *podWrapper {
	p.Spec.TerminationGracePeriodSeconds = proto.Int64(s)
	return p
}

func (p *podWrapper) created(seconds int64) *podWrapper {
	p.Metadata.CreationTimestamp = &metav1.Time{Seconds: seconds}
	return p
}

func (p *podWrapper) phase(ph string) *podWrapper {
	if p.Status == nil {
		p.Status = &corev1.PodStatus{}
	}
	p.Status.Phase = ph
	return p
}

func (p *podWrapper) obj() *corev1.Pod { return p.Pod }

type deploymentWrapper struct{ *appsv1.Deployment }

func makeDeployment() *deploymentWrapper {
	return &deploymentWrapper{&appsv1.Deployment{
		ApiVersion: "apps/v1", Kind: "Deployment",
		Metadata: &metav1.ObjectMeta{},
		Spec:     &appsv1.DeploymentSpec{Template: &corev1.PodTemplateSpec{Spec: &corev1.PodSpec{}}},
	}}
}

func (d *deploymentWrapper) name(n string) *deploymentWrapper { d.Metadata.Name = n; return d }

func (d *deploymentWrapper) replicas(n int32) *deploymentWrapper {
	d.Spec.Replicas = proto.Int32(n)
	return d
}

func (d *deploymentWrapper) rollingUpdate(maxUnavailable, maxSurge *metav1.IntOrString) *deploymentWrapper {
	d.Spec.Strategy = &appsv1.DeploymentStrategy{Type: "RollingUpdate",
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: maxUnavailable, MaxSurge: maxSurge}}
	return d
}

func (d *deploymentWrapper) obj() *appsv1.Deployment { return d.Deployment }

func intOrInt(i int32) *metav1.IntOrString     { return &metav1.IntOrString{Type: 0, IntVal: i} }
func intOrString(s string) *metav1.IntOrString { return &metav1.IntOrString{Type: 1, StrVal: s} }
