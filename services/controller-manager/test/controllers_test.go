package test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/client"
	coordinationv1 "podline.dev/proto/coordination/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/controller-manager/internal/controller/endpointslice"
	"podline.dev/services/controller-manager/internal/controller/nodelifecycle"
)

func TestServiceGetsEndpointSliceOfReadyPods(t *testing.T) {
	s := apiservertest.Start(t)
	startManager(t, s, nil)
	ctx := ctxFor(t, 60*time.Second)
	kubelet(ctx, s)
	svc := &corev1.Service{
		Metadata: &metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: &corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []*corev1.ServicePort{{Name: "http", Port: 80, Protocol: "TCP", TargetPort: &metav1.IntOrString{IntVal: 8080}}}},
	}
	if _, err := client.Services(s.Conn).Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Deployments(s.Conn).Create(ctx, deploymentOf("web", 2, "web:1")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "a slice with both pods ready", func() (bool, string) {
		slices, _, err := client.EndpointSlices(s.Conn).List(ctx, &metav1.ListRequest{Namespace: "default",
			LabelSelector: endpointslice.LabelServiceName + "=web"})
		if err != nil {
			return false, err.Error()
		}
		pods := listPods(ctx, t, s, "default", "app=web")
		var want, got []string
		for _, p := range pods {
			want = append(want, p.GetStatus().GetPodIp())
		}
		for _, sl := range slices {
			for _, e := range sl.GetEndpoints() {
				if e.GetConditions().GetReady() {
					got = append(got, e.GetAddresses()...)
				}
			}
		}
		sort.Strings(want)
		sort.Strings(got)
		ok := len(slices) == 1 && len(got) == 2 && strings.Join(got, ",") == strings.Join(want, ",") &&
			strings.HasPrefix(slices[0].GetMetadata().GetName(), "web-") && len(slices[0].GetMetadata().GetName()) == len("web-")+5
		return ok, fmt.Sprintf("%d slices, ready %v, pods %v", len(slices), got, want)
	})
}

func TestNodeWithoutLeaseRenewalIsTaintedAndItsPodsEvicted(t *testing.T) {
	s := apiservertest.Start(t)
	startManager(t, s, nil)
	ctx := ctxFor(t, 60*time.Second)
	now := time.Now()
	node := &corev1.Node{
		Metadata: &metav1.ObjectMeta{Name: "n1"},
		Spec:     &corev1.NodeSpec{},
		Status: &corev1.NodeStatus{Conditions: []*corev1.NodeCondition{{Type: "Ready", Status: "True",
			LastHeartbeatTime: &metav1.Time{Seconds: now.Unix()}, LastTransitionTime: &metav1.Time{Seconds: now.Unix()}}}},
	}
	if _, err := client.Nodes(s.Conn).Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	lease := &coordinationv1.Lease{Metadata: &metav1.ObjectMeta{Name: "n1", Namespace: nodelifecycle.NodeLeaseNamespace},
		Spec: &coordinationv1.LeaseSpec{HolderIdentity: proto.String("n1"), LeaseDurationSeconds: proto.Int32(40),
			RenewTime: &metav1.MicroTime{Seconds: now.Unix()}}}
	if _, err := client.Leases(s.Conn).Create(ctx, lease); err != nil {
		t.Fatal(err)
	}
	mk := func(name string, tol []*corev1.Toleration) {
		p := &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: &corev1.PodSpec{NodeName: "n1", Tolerations: tol, Containers: []*corev1.Container{{Name: "c", Image: "web:1"}}}}
		if _, err := client.Pods(s.Conn).Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	// Every pod tolerates an unreachable node for 300 s (the apiserver's
	// DefaultTolerationSeconds); this one asks to leave at once.
	mk("intolerant", []*corev1.Toleration{{Key: nodelifecycle.TaintUnreachable, Operator: "Exists", Effect: "NoExecute", TolerationSeconds: proto.Int64(0)}})
	mk("patient", []*corev1.Toleration{{Key: nodelifecycle.TaintUnreachable, Operator: "Exists", Effect: "NoExecute", TolerationSeconds: proto.Int64(3600)}})

	// The lease is never renewed: after the (1 s) grace period the node is Unknown and tainted.
	eventually(t, 10*time.Second, "node unreachable", func() (bool, string) {
		n, err := client.Nodes(s.Conn).Get(ctx, "", "n1")
		if err != nil {
			return false, err.Error()
		}
		var ready string
		for _, c := range n.GetStatus().GetConditions() {
			if c.GetType() == "Ready" {
				ready = c.GetStatus() + " " + c.GetReason()
			}
		}
		tainted := false
		for _, tt := range n.GetSpec().GetTaints() {
			tainted = tainted || (tt.GetKey() == nodelifecycle.TaintUnreachable && tt.GetEffect() == "NoExecute")
		}
		return ready == "Unknown NodeStatusUnknown" && tainted, fmt.Sprintf("Ready %q taints %v", ready, n.GetSpec().GetTaints())
	})
	eventually(t, 10*time.Second, "intolerant pod evicted", func() (bool, string) {
		p, err := client.Pods(s.Conn).Get(ctx, "default", "intolerant")
		if err != nil {
			return true, "" // gone
		}
		return p.GetMetadata().GetDeletionTimestamp() != nil, "not marked for deletion"
	})
	p, err := client.Pods(s.Conn).Get(ctx, "default", "patient")
	if err != nil || p.GetMetadata().GetDeletionTimestamp() != nil {
		t.Errorf("the pod tolerating for an hour was evicted: %v", err)
	}
}

func TestDeletingNamespaceDeletesItsContent(t *testing.T) {
	s := apiservertest.Start(t)
	startManager(t, s, nil)
	ctx := ctxFor(t, 60*time.Second)
	// The apiserver gives every namespace the "kubernetes" spec finalizer
	// and keeps a deleted one Terminating until this controller finalizes it.
	ns := &corev1.Namespace{Metadata: &metav1.ObjectMeta{Name: "team"}}
	if _, err := client.Namespaces(s.Conn).Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	d := deploymentOf("web", 2, "web:1")
	d.Metadata.Namespace = "team"
	if _, err := client.Deployments(s.Conn).Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "pods in team", func() (bool, string) {
		n := len(listPods(ctx, t, s, "team", ""))
		return n == 2, fmt.Sprintf("%d pods", n)
	})
	if _, err := client.Namespaces(s.Conn).Delete(ctx, "", "team", nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "namespace and content gone", func() (bool, string) {
		_, nsErr := client.Namespaces(s.Conn).Get(ctx, "", "team")
		pods := listPods(ctx, t, s, "team", "")
		rss := listRS(ctx, t, s, "team")
		ds, _, _ := client.Deployments(s.Conn).List(ctx, &metav1.ListRequest{Namespace: "team"})
		return nsErr != nil && len(pods)+len(rss)+len(ds) == 0, fmt.Sprintf("namespace err %v; %d pods %d rs %d deployments", nsErr, len(pods), len(rss), len(ds))
	})
	if n := len(listPods(ctx, t, s, "default", "")); n != 0 {
		t.Errorf("%d pods appeared in default", n)
	}
}

func TestDanglingDependentIsCollected(t *testing.T) {
	s := apiservertest.Start(t)
	startManager(t, s, nil)
	ctx := ctxFor(t, 60*time.Second)
	// A pod whose owner never existed.
	p := &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: "stray", Namespace: "default",
		OwnerReferences: []*metav1.OwnerReference{{ApiVersion: "apps/v1", Kind: "ReplicaSet", Name: "ghost", Uid: "ghost-uid"}}},
		Spec: &corev1.PodSpec{Containers: []*corev1.Container{{Name: "c", Image: "web:1"}}}}
	if _, err := client.Pods(s.Conn).Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "stray pod collected", func() (bool, string) {
		_, err := client.Pods(s.Conn).Get(ctx, "default", "stray")
		return err != nil, "still there"
	})
}
