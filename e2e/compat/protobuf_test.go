package compat

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"podline.dev/services/apiserver/apiservertest"
)

const protobufType = "application/vnd.kubernetes.protobuf"

// protobufClient is a clientset that sends its bodies in Kubernetes'
// protobuf encoding, as kubectl and client-go's defaults do, and reads JSON.
func protobufClient(t *testing.T, s *apiservertest.Server) kubernetes.Interface {
	t.Helper()
	cfg := config(s)
	cfg.ContentType = protobufType
	cfg.AcceptContentTypes = protobufType + ",application/json"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// richPod has the fields whose protobuf differs most from podline's own:
// quantities, int-or-string ports, inlined probe handlers, and zeros that
// must come through.
func richPod(name string) *corev1.Pod {
	p := makePod(name).label("app", "web").obj()
	c := &p.Spec.Containers[0]
	c.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}
	c.Resources = corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
	}
	c.LivenessProbe = &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
		InitialDelaySeconds: 3, PeriodSeconds: 10, FailureThreshold: 3,
	}
	c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("http")}}}
	c.Env = []corev1.EnvVar{{Name: "MODE", Value: "demo"}}
	grace := int64(0)
	p.Spec.TerminationGracePeriodSeconds = &grace
	p.Spec.RestartPolicy = corev1.RestartPolicyAlways
	return p
}

// A create through the protobuf clientset stores what the same create
// through the JSON clientset stores, for every kind kubectl's typed
// commands write.
func TestProtobufCreateStoresWhatJSONStores(t *testing.T) {
	ctx := ctxFor(t)
	s, js := start(t)
	pb := protobufClient(t, s)
	const ns = metav1.NamespaceDefault

	zero := makeDeployment("web", 0)
	zero.Spec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"a": []byte("b"), "bin": {0, 1, 2}}}
	service := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{
			{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP},
			{Name: "alt", Port: 81, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP},
		}}}
	node, http := "worker-1", "http"
	endpoints := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"}},
		Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: "10.244.1.5", Hostname: "web-0", NodeName: &node,
				TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "web-0", UID: "u-1"}}},
			NotReadyAddresses: []corev1.EndpointAddress{{IP: "10.244.2.7"}},
			Ports: []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP, AppProtocol: &http},
				{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}},
		}}}

	tests := []struct {
		name   string
		create func(cs kubernetes.Interface, name string) (any, error)
		get    func(name string) (any, error)
	}{{
		name: "Deployment with replicas 0",
		create: func(cs kubernetes.Interface, name string) (any, error) {
			d := zero.DeepCopy()
			d.Name = name
			return cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
		},
		get: func(name string) (any, error) { return js.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{}) },
	}, {
		name: "Pod with resources, probes and ports",
		create: func(cs kubernetes.Interface, name string) (any, error) {
			return cs.CoreV1().Pods(ns).Create(ctx, richPod(name), metav1.CreateOptions{})
		},
		get: func(name string) (any, error) { return js.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{}) },
	}, {
		name: "Namespace",
		create: func(cs kubernetes.Interface, name string) (any, error) {
			return cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": "a"}}}, metav1.CreateOptions{})
		},
		get: func(name string) (any, error) { return js.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{}) },
	}, {
		name: "ConfigMap",
		create: func(cs kubernetes.Interface, name string) (any, error) {
			return cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name},
				Data: map[string]string{"a": "b", "empty": ""}, BinaryData: map[string][]byte{"raw": {0xff, 0}}}, metav1.CreateOptions{})
		},
		get: func(name string) (any, error) { return js.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}) },
	}, {
		name: "Secret",
		create: func(cs kubernetes.Interface, name string) (any, error) {
			o := secret.DeepCopy()
			o.Name = name
			return cs.CoreV1().Secrets(ns).Create(ctx, o, metav1.CreateOptions{})
		},
		get: func(name string) (any, error) { return js.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{}) },
	}, {
		name: "Service",
		create: func(cs kubernetes.Interface, name string) (any, error) {
			o := service.DeepCopy()
			o.Name = name
			return cs.CoreV1().Services(ns).Create(ctx, o, metav1.CreateOptions{})
		},
		get: func(name string) (any, error) { return js.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{}) },
	}, {
		name: "Endpoints with ready and not-ready addresses",
		create: func(cs kubernetes.Interface, name string) (any, error) {
			o := endpoints.DeepCopy()
			o.Name = name
			return cs.CoreV1().Endpoints(ns).Create(ctx, o, metav1.CreateOptions{})
		},
		get: func(name string) (any, error) { return js.CoreV1().Endpoints(ns).Get(ctx, name, metav1.GetOptions{}) },
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.create(pb, "pb"); err != nil {
				t.Fatalf("protobuf create: %v", err)
			}
			if _, err := tt.create(js, "js"); err != nil {
				t.Fatalf("JSON create: %v", err)
			}
			fromPB, err := tt.get("pb")
			if err != nil {
				t.Fatal(err)
			}
			fromJSON, err := tt.get("js")
			if err != nil {
				t.Fatal(err)
			}
			a, b := comparable(t, fromPB), comparable(t, fromJSON)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("stored from protobuf:\n%s\nstored from JSON:\n%s", indent(a), indent(b))
			}
		})
	}

	d, err := js.AppsV1().Deployments(ns).Get(ctx, "pb", metav1.GetOptions{})
	if err != nil || d.Spec.Replicas == nil || *d.Spec.Replicas != 0 {
		t.Fatalf("replicas: 0 did not come through protobuf: %v, %v", d, err)
	}
	p, err := js.CoreV1().Pods(ns).Get(ctx, "pb", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := p.Spec.Containers[0]
	if c.Resources.Limits.Cpu().String() != "500m" || c.ReadinessProbe.TCPSocket.Port.String() != "http" ||
		c.LivenessProbe.HTTPGet.Port.IntValue() != 8080 || *p.Spec.TerminationGracePeriodSeconds != 0 {
		t.Fatalf("pod from protobuf: %+v", p.Spec)
	}
}

// comparable is an object's JSON without what the server sets per object.
func comparable(t *testing.T, obj any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	// The service account token volume's name ends in a random suffix.
	raw = tokenVolume.ReplaceAll(raw, []byte("kube-api-access-*"))
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	md := m["metadata"].(map[string]any)
	for _, k := range []string{"name", "uid", "resourceVersion", "creationTimestamp", "managedFields", "annotations"} {
		delete(md, k)
	}
	if spec, ok := m["spec"].(map[string]any); ok {
		delete(spec, "clusterIP")
		delete(spec, "clusterIPs")
	}
	return m
}

var tokenVolume = regexp.MustCompile(`kube-api-access-[a-z0-9]{5}`)

func indent(v any) []byte {
	out, _ := json.MarshalIndent(v, "", "  ")
	return out
}

// Updates, the status subresource and deletes with options work through the
// protobuf clientset too.
func TestProtobufUpdateStatusAndDelete(t *testing.T) {
	ctx := ctxFor(t)
	s, js := start(t)
	pb := protobufClient(t, s)
	deps := pb.AppsV1().Deployments(metav1.NamespaceDefault)

	d, err := deps.Create(ctx, makeDeployment("web", 2), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	three := int32(3)
	d.Spec.Replicas = &three
	d.Spec.Template.Spec.Containers[0].Image = "registry.podline:5000/demo/web:2.0"
	if d, err = deps.Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update: %v", err)
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 3, ReadyReplicas: 0,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue,
			Reason: "NewReplicaSetAvailable", LastUpdateTime: metav1.Unix(1700000000, 0), LastTransitionTime: metav1.Unix(1700000000, 0)}}}
	if _, err = deps.UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update status: %v", err)
	}
	got, err := js.AppsV1().Deployments(metav1.NamespaceDefault).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *got.Spec.Replicas != 3 || got.Spec.Template.Spec.Containers[0].Image != "registry.podline:5000/demo/web:2.0" ||
		got.Status.Replicas != 3 || len(got.Status.Conditions) != 1 || !got.Status.Conditions[0].LastUpdateTime.Equal(&metav1.Time{Time: metav1.Unix(1700000000, 0).Time}) {
		t.Fatalf("after protobuf update and status update: spec %+v status %+v", got.Spec, got.Status)
	}

	policy := metav1.DeletePropagationBackground
	if err := deps.Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := deps.Get(ctx, "web", metav1.GetOptions{}); err == nil {
		t.Fatal("deployment still there after a protobuf delete")
	}
}

// A field number Kubernetes' Pod does not have is refused with 400 and
// nothing is stored; it is never silently dropped.
func TestProtobufUnknownFieldNumberIsBadRequest(t *testing.T) {
	ctx := ctxFor(t)
	s, js := start(t)
	raw, err := richPod("odd").Marshal()
	if err != nil {
		t.Fatal(err)
	}
	raw = append(raw, 0xc8, 0x06, 0x01) // field 105, varint 1
	env, err := (&runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v1", Kind: "Pod"}, Raw: raw}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	status := post(t, ctx, s.URL+"/api/v1/namespaces/default/pods", append([]byte("k8s\x00"), env...))
	if status.Code != http.StatusBadRequest || status.Reason != metav1.StatusReasonBadRequest ||
		!strings.Contains(status.Message, "unknown field number 105") || status.Details == nil ||
		len(status.Details.Causes) != 1 || status.Details.Causes[0].Type != "FieldUnknown" {
		t.Fatalf("status: %+v", status)
	}
	if list, err := js.CoreV1().Pods(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Fatalf("pods after a refused create: %v, %v", list, err)
	}
}

func post(t *testing.T, ctx context.Context, url string, body []byte) metav1.Status {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", protobufType)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st metav1.Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// Subresources whose bodies are another kind read protobuf too: a Pod's
// binding (what a scheduler built on client-go sends) and a Deployment's
// scale (what kubectl scale's typed client would send).
func TestProtobufBindingAndScale(t *testing.T) {
	ctx := ctxFor(t)
	s, js := start(t)
	pb := protobufClient(t, s)
	const ns = metav1.NamespaceDefault

	if _, err := pb.CoreV1().Pods(ns).Create(ctx, makePod("web").obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}
	if err := pb.CoreV1().Pods(ns).Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("bind: %v", err)
	}
	if p, err := js.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil || p.Spec.NodeName != "node-1" {
		t.Fatalf("after a protobuf binding: %v, %v", p, err)
	}

	if _, err := pb.AppsV1().Deployments(ns).Create(ctx, makeDeployment("web", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	scale, err := pb.AppsV1().Deployments(ns).GetScale(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = 0
	if _, err := pb.AppsV1().Deployments(ns).UpdateScale(ctx, "web", scale, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update scale: %v", err)
	}
	if d, err := js.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil || *d.Spec.Replicas != 0 {
		t.Fatalf("after a protobuf scale to 0: %v, %v", d, err)
	}
}
