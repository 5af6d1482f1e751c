package compat

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"podline.dev/services/apiserver/apiservertest"
)

// start runs an apiserver and returns a client-go clientset talking REST to it.
func start(t *testing.T) (*apiservertest.Server, kubernetes.Interface) {
	t.Helper()
	s := apiservertest.Start(t)
	cs, err := kubernetes.NewForConfig(config(s))
	if err != nil {
		t.Fatal(err)
	}
	return s, cs
}

// config is the rest.Config a user's kubeconfig would give for s, with
// client-side rate limiting lifted (the default is 5 requests/s) so tests
// that write a thousand times run fast.
func config(s *apiservertest.Server) *rest.Config {
	return &rest.Config{
		Host:          s.URL,
		Timeout:       30 * time.Second,
		QPS:           -1,
		ContentConfig: rest.ContentConfig{ContentType: "application/json"},
	}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond until it returns nil or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, cond func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err = cond(); err == nil {
			return
		}
	}
	t.Fatalf("not within %v: %v", timeout, err)
}

// podBuilder builds Pods: makePod("web").label("app", "web").obj().
type podBuilder struct{ p *corev1.Pod }

func makePod(name string) *podBuilder {
	return &podBuilder{p: &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "web", Image: "registry.podline:5000/demo/web:1.0"}},
		},
	}}
}

func (b *podBuilder) namespace(ns string) *podBuilder { b.p.Namespace = ns; return b }

func (b *podBuilder) label(k, v string) *podBuilder {
	if b.p.Labels == nil {
		b.p.Labels = map[string]string{}
	}
	b.p.Labels[k] = v
	return b
}

func (b *podBuilder) node(n string) *podBuilder { b.p.Spec.NodeName = n; return b }

func (b *podBuilder) obj() *corev1.Pod { return b.p.DeepCopy() }

// makeDeployment builds a Deployment of replicas Pods labelled app=name.
func makeDeployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: name, Image: fmt.Sprintf("registry.podline:5000/demo/%s:1.0", name)}},
				},
			},
		},
	}
}
