package printers

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"google.golang.org/protobuf/proto"

	appsv1 "podline.dev/proto/apps/v1"
	coordinationv1 "podline.dev/proto/coordination/v1"
	corev1 "podline.dev/proto/core/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
	metav1 "podline.dev/proto/meta/v1"
	rbacv1 "podline.dev/proto/rbac/v1"
	schedulingv1 "podline.dev/proto/scheduling/v1"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata/")

// now is the fixed time every age in the golden files is measured at.
var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) *metav1.Time { return &metav1.Time{Seconds: now.Add(-d).Unix()} }

func meta(name string, age time.Duration) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Name: name, Namespace: "default", ResourceVersion: "42", CreationTimestamp: ago(age)}
}

// render prints a table as kubectl's wide output does: upper-case headers,
// one line per row, wide-only columns marked with a trailing '*'.
func render(t *testing.T, tab *Table) string {
	t.Helper()
	var b bytes.Buffer
	w := tabwriter.NewWriter(&b, 0, 8, 3, ' ', 0)
	var head []string
	for _, c := range tab.ColumnDefinitions {
		h := strings.ToUpper(c.Name)
		if c.Priority > 0 {
			h += "*"
		}
		head = append(head, h)
	}
	fmt.Fprintln(w, strings.Join(head, "\t"))
	for _, r := range tab.Rows {
		if len(r.Cells) != len(tab.ColumnDefinitions) {
			t.Fatalf("row has %d cells for %d columns: %v", len(r.Cells), len(tab.ColumnDefinitions), r.Cells)
		}
		var cells []string
		for _, c := range r.Cells {
			cells = append(cells, fmt.Sprint(c))
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	_ = w.Flush()
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".txt")
	if *rewrite {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -rewrite to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s--- want\n%s", name, path, got, want)
	}
}

func convert(t *testing.T, m proto.Message) *Table {
	t.Helper()
	tab, err := Convert(m, Options{Include: IncludeNone, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func TestGoldenTables(t *testing.T) {
	for name, list := range goldenLists() {
		t.Run(name, func(t *testing.T) { golden(t, name, render(t, convert(t, list))) })
	}
}

func goldenLists() map[string]proto.Message {
	three := int32(3)
	return map[string]proto.Message{
		"pods": &corev1.PodList{Items: podCases()},
		"deployments": &appsv1.DeploymentList{Items: []*appsv1.Deployment{
			{Metadata: meta("web", 5*time.Minute), Spec: &appsv1.DeploymentSpec{Replicas: &three,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: template("web:1", "sidecar:2")},
				Status: &appsv1.DeploymentStatus{ReadyReplicas: 2, UpdatedReplicas: 3, AvailableReplicas: 2}},
			{Metadata: meta("defaulted", 50*time.Hour), Spec: &appsv1.DeploymentSpec{Template: template("app:1")}},
		}},
		"replicasets": &appsv1.ReplicaSetList{Items: []*appsv1.ReplicaSet{
			{Metadata: meta("web-7c9d8f6b5", 4*time.Minute), Spec: &appsv1.ReplicaSetSpec{Replicas: &three,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "pod-template-hash": "7c9d8f6b5"}},
				Template: template("web:1")},
				Status: &appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 1}},
		}},
		"nodes": &corev1.NodeList{Items: []*corev1.Node{
			{Metadata: &metav1.ObjectMeta{Name: "node-1", CreationTimestamp: ago(3 * time.Hour),
				Labels: map[string]string{"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "worker"}},
				Status: &corev1.NodeStatus{
					Conditions: []*corev1.NodeCondition{{Type: "Ready", Status: "True"}},
					Addresses:  []*corev1.NodeAddress{{Type: "InternalIP", Address: "172.18.0.5"}, {Type: "Hostname", Address: "node-1"}},
					NodeInfo: &corev1.NodeSystemInfo{KubeletVersion: "v1.37.0-podline", OsImage: "Debian GNU/Linux 12 (bookworm)",
						KernelVersion: "6.1.0", ContainerRuntimeVersion: "containerd://2.4.2"}}},
			{Metadata: &metav1.ObjectMeta{Name: "node-2", CreationTimestamp: ago(90 * time.Second)},
				Spec:   &corev1.NodeSpec{Unschedulable: true},
				Status: &corev1.NodeStatus{Conditions: []*corev1.NodeCondition{{Type: "Ready", Status: "Unknown"}}}},
			{Metadata: &metav1.ObjectMeta{Name: "node-3", CreationTimestamp: ago(400 * 24 * time.Hour)}},
		}},
		"namespaces": &corev1.NamespaceList{Items: []*corev1.Namespace{
			{Metadata: meta("default", 10*24*time.Hour), Status: &corev1.NamespaceStatus{Phase: "Active"}},
			{Metadata: meta("going", time.Hour), Status: &corev1.NamespaceStatus{Phase: "Terminating"}},
		}},
		"events": &corev1.EventList{Items: []*corev1.Event{
			{Metadata: meta("web-7c9d8f6b5-x2kqp.1", 0), InvolvedObject: &corev1.ObjectReference{Kind: "Pod", Name: "web-7c9d8f6b5-x2kqp"},
				Reason: "Scheduled", Message: "Successfully assigned default/web-7c9d8f6b5-x2kqp to node-1 ", Type: "Normal",
				Source: &corev1.EventSource{Component: "default-scheduler"}, FirstTimestamp: ago(70 * time.Second), LastTimestamp: ago(70 * time.Second), Count: 1},
			{Metadata: meta("web-7c9d8f6b5-x2kqp.2", 0), InvolvedObject: &corev1.ObjectReference{Kind: "Pod", Name: "web-7c9d8f6b5-x2kqp", FieldPath: "spec.containers{web}"},
				Reason: "BackOff", Message: "Back-off restarting failed container", Type: "Warning",
				Source:         &corev1.EventSource{Component: "kubelet", Host: "node-1"},
				FirstTimestamp: ago(5 * time.Minute), LastTimestamp: ago(10 * time.Second), Count: 7},
			{Metadata: meta("web.3", 0), InvolvedObject: &corev1.ObjectReference{Kind: "Deployment", Name: "web"},
				Reason: "ScalingReplicaSet", Message: "Scaled up replica set web-7c9d8f6b5 from 0 to 2", Type: "Normal",
				EventTime: &metav1.MicroTime{Seconds: now.Add(-3 * time.Minute).Unix()}, ReportingComponent: "deployment-controller",
				Series: &corev1.EventSeries{Count: 4, LastObservedTime: &metav1.MicroTime{Seconds: now.Add(-time.Minute).Unix()}}},
		}},
		"services": &corev1.ServiceList{Items: []*corev1.Service{
			{Metadata: meta("kubernetes", 2*time.Hour), Spec: &corev1.ServiceSpec{Type: "ClusterIP", ClusterIp: "10.96.0.1", ClusterIps: []string{"10.96.0.1"},
				Ports: []*corev1.ServicePort{{Port: 443, Protocol: "TCP"}}}},
			{Metadata: meta("web", 20*time.Minute), Spec: &corev1.ServiceSpec{Type: "NodePort", ClusterIps: []string{"10.96.0.20"},
				Selector: map[string]string{"app": "web", "tier": "front"},
				Ports:    []*corev1.ServicePort{{Port: 80, NodePort: 30080, Protocol: "TCP"}, {Port: 53, Protocol: "UDP"}}}},
			{Metadata: meta("lb", time.Minute), Spec: &corev1.ServiceSpec{Type: "LoadBalancer", ClusterIps: []string{"10.96.0.30"}}},
			{Metadata: meta("ext", time.Minute), Spec: &corev1.ServiceSpec{Type: "ExternalName", ExternalName: "example.internal"}},
		}},
		"endpointslices": &discoveryv1.EndpointSliceList{Items: []*discoveryv1.EndpointSlice{
			{Metadata: meta("web-abcde", 3*time.Minute), AddressType: "IPv4",
				Ports: []*discoveryv1.EndpointPort{{Port: proto.Int32(8080)}, {Name: proto.String("metrics")}},
				Endpoints: []*discoveryv1.Endpoint{{Addresses: []string{"10.244.1.2"}}, {Addresses: []string{"10.244.1.3"}},
					{Addresses: []string{"10.244.2.2"}}, {Addresses: []string{"10.244.2.3"}}, {Addresses: []string{"10.244.3.2"}}}},
			{Metadata: meta("empty-xyz", 3*time.Minute), AddressType: "IPv4"},
		}},
		"endpoints": &corev1.EndpointsList{Items: []*corev1.Endpoints{
			{Metadata: meta("web", 3*time.Minute), Subsets: []*corev1.EndpointSubset{{
				Addresses:         []*corev1.EndpointAddress{{Ip: "10.244.1.5"}, {Ip: "10.244.2.7"}},
				NotReadyAddresses: []*corev1.EndpointAddress{{Ip: "10.244.2.9"}},
				Ports:             []*corev1.EndpointPort{{Name: "http", Port: 80}}}}},
			{Metadata: meta("dns", 3*time.Minute), Subsets: []*corev1.EndpointSubset{{
				Addresses: []*corev1.EndpointAddress{{Ip: "10.1.0.20"}, {Ip: "10.1.0.21"}, {Ip: "fd00::5"}},
				Ports:     []*corev1.EndpointPort{{Name: "dns", Port: 53, Protocol: "UDP"}, {Name: "dns-tcp", Port: 53}}}}},
			{Metadata: meta("headless", 3*time.Minute), Subsets: []*corev1.EndpointSubset{{
				Addresses: []*corev1.EndpointAddress{{Ip: "10.244.1.8"}}}}},
			{Metadata: meta("starting", 3*time.Minute), Subsets: []*corev1.EndpointSubset{{
				NotReadyAddresses: []*corev1.EndpointAddress{{Ip: "10.244.1.9"}},
				Ports:             []*corev1.EndpointPort{{Port: 8080}}}}},
			{Metadata: meta("nothing", 3*time.Minute)},
		}},
		"configmaps": &corev1.ConfigMapList{Items: []*corev1.ConfigMap{
			{Metadata: meta("kube-root-ca.crt", time.Hour), Data: map[string]string{"ca.crt": "x"}, BinaryData: map[string][]byte{"b": {1}}},
		}},
		"secrets": &corev1.SecretList{Items: []*corev1.Secret{
			{Metadata: meta("token", time.Hour), Type: "Opaque", Data: map[string][]byte{"a": {1}, "b": {2}}},
		}},
		"resourcequotas": &corev1.ResourceQuotaList{Items: []*corev1.ResourceQuota{
			{Metadata: meta("compute", time.Hour), Status: &corev1.ResourceQuotaStatus{
				Hard: map[string]string{"pods": "10", "requests.cpu": "2", "limits.memory": "4Gi", "limits.cpu": "4"},
				Used: map[string]string{"pods": "3", "requests.cpu": "500m", "limits.cpu": "1"}}},
			{Metadata: meta("unenforced", time.Hour)},
		}},
		"serviceaccounts": &corev1.ServiceAccountList{Items: []*corev1.ServiceAccount{{Metadata: meta("default", time.Hour)}}},
		"leases": &coordinationv1.LeaseList{Items: []*coordinationv1.Lease{
			{Metadata: meta("kube-scheduler", time.Hour), Spec: &coordinationv1.LeaseSpec{HolderIdentity: proto.String("scheduler-1_3f2a")}},
			{Metadata: meta("unheld", time.Hour), Spec: &coordinationv1.LeaseSpec{}},
		}},
		"priorityclasses": &schedulingv1.PriorityClassList{Items: []*schedulingv1.PriorityClass{
			{Metadata: meta("system-node-critical", time.Hour), Value: 2000001000, PreemptionPolicy: proto.String("PreemptLowerPriority")},
			{Metadata: meta("batch", time.Hour), Value: -5, GlobalDefault: true, PreemptionPolicy: proto.String("Never")},
		}},
		"roles": &rbacv1.RoleList{Items: []*rbacv1.Role{{Metadata: meta("reader", time.Hour)}}},
		"rolebindings": &rbacv1.ClusterRoleBindingList{Items: []*rbacv1.ClusterRoleBinding{
			{Metadata: meta("admins", time.Hour), RoleRef: &rbacv1.RoleRef{Kind: "ClusterRole", Name: "cluster-admin"},
				Subjects: []*rbacv1.Subject{{Kind: "Group", Name: "system:masters"}, {Kind: "User", Name: "alice"}, {Kind: "User", Name: "bob"},
					{Kind: "ServiceAccount", Namespace: "kube-system", Name: "ci"}}},
		}},
	}
}

func template(images ...string) *corev1.PodTemplateSpec {
	spec := &corev1.PodSpec{}
	for i, img := range images {
		spec.Containers = append(spec.Containers, &corev1.Container{Name: fmt.Sprintf("c%d", i), Image: img})
	}
	return &corev1.PodTemplateSpec{Spec: spec}
}
