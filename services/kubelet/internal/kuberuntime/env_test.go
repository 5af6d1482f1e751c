package kuberuntime

import (
	"context"
	"errors"
	"reflect"
	"testing"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/kubelet/internal/fieldpath"
)

type services struct {
	list []*corev1.Service
	err  error
}

func (s services) ListServices() ([]*corev1.Service, error) { return s.list, s.err }

func envPod(links *bool, env ...*corev1.EnvVar) (*corev1.Pod, *corev1.Container) {
	c := &corev1.Container{Name: "web", Env: env}
	return &corev1.Pod{
		Metadata: &metav1.ObjectMeta{Namespace: "team", Name: "p"},
		Spec:     &corev1.PodSpec{EnableServiceLinks: links, Containers: []*corev1.Container{c}},
	}, c
}

func TestContainerEnvAddsServiceVariablesAfterItsOwn(t *testing.T) {
	m := NewManager(Config{RootDir: t.TempDir(), Services: services{list: []*corev1.Service{
		{Metadata: &metav1.ObjectMeta{Namespace: "default", Name: "kubernetes"},
			Spec: &corev1.ServiceSpec{ClusterIp: "10.96.0.1", Ports: []*corev1.ServicePort{{Name: "https", Port: 443, Protocol: "TCP"}}}},
	}}})
	pod, c := envPod(nil,
		&corev1.EnvVar{Name: "API", Value: "https://$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)"},
		&corev1.EnvVar{Name: "KUBERNETES_SERVICE_PORT", Value: "8443"})
	got, err := m.containerEnv(context.Background(), pod, c, fieldpath.Env{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"API=https://10.96.0.1:443",
		"KUBERNETES_SERVICE_PORT=8443",
		"KUBERNETES_SERVICE_HOST=10.96.0.1",
		"KUBERNETES_SERVICE_PORT_HTTPS=443",
		"KUBERNETES_PORT=tcp://10.96.0.1:443",
		"KUBERNETES_PORT_443_TCP=tcp://10.96.0.1:443",
		"KUBERNETES_PORT_443_TCP_PROTO=tcp",
		"KUBERNETES_PORT_443_TCP_PORT=443",
		"KUBERNETES_PORT_443_TCP_ADDR=10.96.0.1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestContainerEnvWaitsForTheServicesToBeRead(t *testing.T) {
	notRead := errors.New("services have not yet been read at least once, cannot construct envvars")
	m := NewManager(Config{RootDir: t.TempDir(), Services: services{err: notRead}})
	pod, c := envPod(nil)
	if _, err := m.containerEnv(context.Background(), pod, c, fieldpath.Env{}); !errors.Is(err, notRead) {
		t.Fatalf("err %v, want %v", err, notRead)
	}
}

func TestContainerEnvWithoutServiceLinksKeepsKubernetesOnly(t *testing.T) {
	off := false
	m := NewManager(Config{RootDir: t.TempDir(), Services: services{list: []*corev1.Service{
		{Metadata: &metav1.ObjectMeta{Namespace: "team", Name: "db"},
			Spec: &corev1.ServiceSpec{ClusterIp: "10.96.0.9", Ports: []*corev1.ServicePort{{Port: 5432}}}},
	}}})
	pod, c := envPod(&off)
	got, err := m.containerEnv(context.Background(), pod, c, fieldpath.Env{})
	if err != nil || len(got) != 0 {
		t.Fatalf("got %q, %v; want no variables", got, err)
	}
}

func TestContainerEnvOfAStaticPodDoesNotWaitForTheServices(t *testing.T) {
	m := NewManager(Config{RootDir: t.TempDir(), Services: services{err: errors.New("services have not yet been read at least once")}})
	pod, c := envPod(nil)
	pod.Metadata.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
	if got, err := m.containerEnv(context.Background(), pod, c, fieldpath.Env{}); err != nil || len(got) != 0 {
		t.Fatalf("got %q, %v; want no variables and no error", got, err)
	}
}
