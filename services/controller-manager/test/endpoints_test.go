package test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
)

// The endpoints controller, through the real apiserver (validation,
// defaulting, storage in etcd): a Service's Endpoints lists its ready pods'
// IPs at the resolved targetPort, and goes away with the Service.
func TestServiceGetsEndpointsOfReadyPods(t *testing.T) {
	s := apiservertest.Start(t)
	startManager(t, s, nil)
	ctx := ctxFor(t, 60*time.Second)
	kubelet(ctx, s)
	svc := &corev1.Service{
		Metadata: &metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"tier": "front"}},
		Spec: &corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []*corev1.ServicePort{{Name: "http", Port: 80, TargetPort: &metav1.IntOrString{IntVal: 8080}}}},
	}
	if _, err := client.Services(s.Conn).Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Deployments(s.Conn).Create(ctx, deploymentOf("web", 2, "web:1")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "an Endpoints with both pods ready on 8080", func() (bool, string) {
		ep, err := client.Endpoints(s.Conn).Get(ctx, "default", "web")
		if err != nil {
			return false, err.Error()
		}
		var want, got []string
		for _, p := range listPods(ctx, t, s, "default", "app=web") {
			want = append(want, p.GetStatus().GetPodIp()+":8080")
		}
		for _, ss := range ep.GetSubsets() {
			for _, p := range ss.GetPorts() {
				for _, a := range ss.GetAddresses() {
					got = append(got, fmt.Sprintf("%s:%d", a.GetIp(), p.GetPort()))
				}
				if p.GetProtocol() != "TCP" || p.GetName() != "http" {
					return false, fmt.Sprintf("port %v", p)
				}
			}
		}
		sort.Strings(want)
		sort.Strings(got)
		ok := len(got) == 2 && strings.Join(got, ",") == strings.Join(want, ",") && ep.GetMetadata().GetLabels()["tier"] == "front"
		return ok, fmt.Sprintf("ready %v, pods %v, labels %v", got, want, ep.GetMetadata().GetLabels())
	})
	if _, err := client.Services(s.Conn).Delete(ctx, "default", "web", nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "the Endpoints gone with its Service", func() (bool, string) {
		_, err := client.Endpoints(s.Conn).Get(ctx, "default", "web")
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}
