package test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/object"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/request"
	"podline.dev/services/apiserver/internal/storage"
)

// These tests run the whole write path on embedded etcd: REST decoding,
// mutating admission, validation, validating admission, storage.

const deploymentJSON = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q},
 "spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},
 "spec":{"containers":[{"name":"web","image":"registry.podline:5000/demo/web","ports":[{"containerPort":8080}]}]}}}}`

func TestDefaultsAreVisibleOnTheStoredObject(t *testing.T) {
	c, s := newREST(t)
	if code, body, _ := c.do("POST", "/apis/apps/v1/namespaces/default/deployments", "application/json", fmt.Appendf(nil, deploymentJSON, "web")); code != 201 {
		t.Fatalf("create deployment: %d %v", code, body)
	}
	obj, err := s.API.Registry("deployments.apps").Get(ctxFor(t), "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	d := obj.(*appsv1.Deployment).GetSpec()
	ru := d.GetStrategy().GetRollingUpdate()
	ps := d.GetTemplate().GetSpec()
	c0 := ps.GetContainers()[0]
	for _, ck := range []struct {
		what      string
		got, want any
	}{
		{"replicas", d.GetReplicas(), int32(1)},
		{"revisionHistoryLimit", d.GetRevisionHistoryLimit(), int32(10)},
		{"progressDeadlineSeconds", d.GetProgressDeadlineSeconds(), int32(600)},
		{"strategy", d.GetStrategy().GetType(), "RollingUpdate"},
		{"maxSurge", ru.GetMaxSurge().GetStrVal(), "25%"},
		{"maxUnavailable", ru.GetMaxUnavailable().GetStrVal(), "25%"},
		{"template restartPolicy", ps.GetRestartPolicy(), "Always"},
		{"template dnsPolicy", ps.GetDnsPolicy(), "ClusterFirst"},
		{"template schedulerName", ps.GetSchedulerName(), "default-scheduler"},
		{"template terminationGracePeriodSeconds", ps.GetTerminationGracePeriodSeconds(), int64(30)},
		{"imagePullPolicy of an untagged image", c0.GetImagePullPolicy(), "Always"},
		{"port protocol", c0.GetPorts()[0].GetProtocol(), "TCP"},
	} {
		if ck.got != ck.want {
			t.Errorf("stored %s = %v, want %v", ck.what, ck.got, ck.want)
		}
	}
	if g := obj.GetMetadata().GetGeneration(); g != 1 {
		t.Errorf("generation = %d, want 1", g)
	}

	// Replacing it with the same manifest (defaults left out) is no spec
	// change: generation stays.
	code, body, _ := c.do("PUT", "/apis/apps/v1/namespaces/default/deployments/web", "application/json", fmt.Appendf(nil, deploymentJSON, "web"))
	if code != 200 {
		t.Fatalf("replace: %d %v", code, body)
	}
	if g := body["metadata"].(map[string]any)["generation"]; g != float64(1) {
		t.Errorf("generation after replacing with the same manifest = %v, want 1", g)
	}

	pods := startServerClient(s)
	p, err := pods.Create(ctxFor(t), pod("solo", nil))
	if err != nil {
		t.Fatal(err)
	}
	sp := p.GetSpec()
	if sp.GetServiceAccountName() != "default" || sp.GetPriority() != 0 || sp.Priority == nil || sp.GetPreemptionPolicy() != "PreemptLowerPriority" {
		t.Errorf("pod serviceAccountName/priority/preemptionPolicy = %q/%v/%q", sp.GetServiceAccountName(), sp.Priority, sp.GetPreemptionPolicy())
	}
	if v := sp.GetVolumes(); len(v) != 1 || !strings.HasPrefix(v[0].GetName(), "kube-api-access-") {
		t.Errorf("pod volumes = %v, want the token volume", v)
	} else if m := sp.GetContainers()[0].GetVolumeMounts(); len(m) != 1 || m[0].GetMountPath() != "/var/run/secrets/kubernetes.io/serviceaccount" {
		t.Errorf("container mounts = %v", m)
	}
	var keys []string
	for _, tol := range sp.GetTolerations() {
		if tol.GetTolerationSeconds() == 300 && tol.GetEffect() == "NoExecute" {
			keys = append(keys, tol.GetKey())
		}
	}
	if !slices.Equal(keys, []string{"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}) {
		t.Errorf("tolerations = %v", sp.GetTolerations())
	}
}

func TestInvalidDeploymentIs422ListingEveryFieldAndStoresNothing(t *testing.T) {
	c, s := newREST(t)
	body := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"bad","labels":{"tier":"front end"}},
 "spec":{"replicas":-2,"selector":{"matchLabels":{"app":"web"}},"strategy":{"type":"Blue"},
 "template":{"metadata":{"labels":{"app":"other"}},"spec":{"restartPolicy":"Never",
 "containers":[{"name":"web","ports":[{"containerPort":0}],"resources":{"requests":{"cpu":"2"},"limits":{"cpu":"1"}}}]}}}}`
	code, status, _ := c.do("POST", "/apis/apps/v1/namespaces/default/deployments", "application/json", []byte(body))
	if code != 422 || status["reason"] != "Invalid" {
		t.Fatalf("got %d %v", code, status)
	}
	details, _ := status["details"].(map[string]any)
	var got []string
	for _, cause := range details["causes"].([]any) {
		got = append(got, cause.(map[string]any)["field"].(string))
	}
	want := []string{
		"metadata.labels",
		"spec.replicas",
		"spec.strategy.type",
		"spec.template.metadata.labels",
		"spec.template.spec.containers[0].image",
		"spec.template.spec.containers[0].ports[0].containerPort",
		"spec.template.spec.containers[0].resources.requests[cpu]",
		"spec.template.spec.restartPolicy",
	}
	slices.Sort(got)
	got = slices.Compact(got)
	if !slices.Equal(got, want) {
		t.Errorf("causes name\n  %v\nwant\n  %v", got, want)
	}
	if msg := status["message"].(string); !strings.HasPrefix(msg, `Deployment.apps "bad" is invalid: [`) || !strings.Contains(msg, "spec.template.spec.containers[0].image: Required value") {
		t.Errorf("message %q", msg)
	}
	if _, err := s.API.Registry("deployments.apps").Get(ctxFor(t), "default", "bad"); !apierrors.IsNotFound(err) {
		t.Fatalf("etcd holds the invalid deployment: %v", err)
	}
}

func TestCreateInMissingNamespaceIs404(t *testing.T) {
	c, _ := newREST(t)
	// Even an invalid body: the namespace is checked first.
	for _, body := range []string{fmt.Sprintf(podJSON, "x"), fmt.Sprintf(podJSON, "Not_Valid")} {
		code, status, _ := c.do("POST", "/api/v1/namespaces/nowhere/pods", "application/json", []byte(body))
		if code != 404 || status["reason"] != "NotFound" || status["message"] != `namespaces "nowhere" not found` {
			t.Fatalf("got %d %v", code, status)
		}
	}
}

func TestTerminatingAndSystemNamespaces(t *testing.T) {
	c, _ := newREST(t)
	ns := `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"leaving","finalizers":["example.com/hold"]}}`
	if code, body, _ := c.do("POST", "/api/v1/namespaces", "application/json", []byte(ns)); code != 201 {
		t.Fatalf("create namespace: %d %v", code, body)
	}
	if code, body, _ := c.do("DELETE", "/api/v1/namespaces/leaving", "", nil); code != 200 {
		t.Fatalf("delete namespace: %d %v", code, body)
	}
	// The plugin reads namespaces from the watch cache, which sees the
	// deletion a moment later; poll as a client would.
	var code int
	var status map[string]any
	for i := 0; i < 50; i++ {
		name := fmt.Sprintf("late-%d", i)
		code, status, _ = c.do("POST", "/api/v1/namespaces/leaving/pods", "application/json", fmt.Appendf(nil, podJSON, name))
		if code != 201 {
			if code != 403 || status["message"] != `pods "`+name+`" is forbidden: unable to create new content in namespace leaving because it is being terminated` {
				t.Fatalf("create in a terminating namespace: %d %v", code, status)
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code != 403 {
		t.Fatal("pods are still created in a terminating namespace after 5s")
	}
	code, status, _ = c.do("DELETE", "/api/v1/namespaces/kube-system", "", nil)
	if code != 403 || status["message"] != `namespaces "kube-system" is forbidden: this namespace may not be deleted` {
		t.Fatalf("delete kube-system: %d %v", code, status)
	}
}

func TestPodSecurityEnforceAndWarn(t *testing.T) {
	c, _ := newREST(t)
	for name, mode := range map[string]string{"locked": "enforce", "watched": "warn"} {
		ns := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q,"labels":{"pod-security.kubernetes.io/%s":"restricted"}}}`, name, mode)
		if code, body, _ := c.do("POST", "/api/v1/namespaces", "application/json", []byte(ns)); code != 201 {
			t.Fatalf("create namespace: %d %v", code, body)
		}
	}
	code, status, _ := c.do("POST", "/api/v1/namespaces/locked/pods", "application/json", fmt.Appendf(nil, podJSON, "x"))
	want := `pods "x" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "web" must set securityContext.allowPrivilegeEscalation=false), ` +
		`unrestricted capabilities (container "web" must set securityContext.capabilities.drop=["ALL"]), ` +
		`runAsNonRoot != true (pod or container "web" must set securityContext.runAsNonRoot=true), ` +
		`seccompProfile (pod or container "web" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
	if code != 403 || status["reason"] != "Forbidden" || status["message"] != want {
		t.Fatalf("enforce: %d %v", code, status)
	}
	code, _, header := c.do("POST", "/api/v1/namespaces/watched/pods", "application/json", fmt.Appendf(nil, podJSON, "x"))
	if code != 201 {
		t.Fatalf("warn: %d", code)
	}
	if w := header.Get("Warning"); !strings.HasPrefix(w, `299 - "would violate PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false`) {
		t.Fatalf("Warning header %q", w)
	}

	restricted := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"ok"},"spec":{
 "securityContext":{"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}},
 "containers":[{"name":"web","image":"web:1","securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]}}}]}}`
	if code, status, _ := c.do("POST", "/api/v1/namespaces/locked/pods", "application/json", []byte(restricted)); code != 201 {
		t.Fatalf("a restricted pod in an enforcing namespace: %d %v", code, status)
	}
}

func TestQuotaExceededIs403(t *testing.T) {
	c, _ := newREST(t)
	for _, obj := range []struct{ path, body string }{
		{"/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}}`},
		{"/api/v1/namespaces/team/resourcequotas", `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"small"},"spec":{"hard":{"pods":"1","requests.cpu":"1"}}}`},
	} {
		if code, body, _ := c.do("POST", obj.path, "application/json", []byte(obj.body)); code != 201 {
			t.Fatalf("create %s: %d %v", obj.path, code, body)
		}
	}
	withCPU := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q},"spec":{"containers":[{"name":"web","image":"web:1","resources":{"requests":{"cpu":%q}}}]}}`
	code, status, _ := c.do("POST", "/api/v1/namespaces/team/pods", "application/json", fmt.Appendf(nil, withCPU, "big", "2"))
	if code != 403 || status["message"] != `pods "big" is forbidden: exceeded quota: small, requested: requests.cpu=2, used: requests.cpu=0, limited: requests.cpu=1` {
		t.Fatalf("over the cpu quota: %d %v", code, status)
	}
	code, status, _ = c.do("POST", "/api/v1/namespaces/team/pods", "application/json", fmt.Appendf(nil, podJSON, "nocpu"))
	if code != 403 || status["message"] != `pods "nocpu" is forbidden: failed quota: small: must specify requests.cpu for: web` {
		t.Fatalf("no cpu request: %d %v", code, status)
	}
	if code, status, _ := c.do("POST", "/api/v1/namespaces/team/pods", "application/json", fmt.Appendf(nil, withCPU, "first", "500m")); code != 201 {
		t.Fatalf("first pod: %d %v", code, status)
	}
	code, status, _ = c.do("POST", "/api/v1/namespaces/team/pods", "application/json", fmt.Appendf(nil, withCPU, "second", "100m"))
	if code != 403 || status["message"] != `pods "second" is forbidden: exceeded quota: small, requested: pods=1, used: pods=1, limited: pods=1` {
		t.Fatalf("over the pod count: %d %v", code, status)
	}
}

func TestNodeMayCreateOnlyItsOwnMirrorPods(t *testing.T) {
	s, _ := startServer(t)
	kubelet := request.WithUser(ctxFor(t), &request.User{Name: "system:node:n1", Groups: []string{request.Nodes}})
	reg := s.API.Registry("pods")
	_, err := reg.Create(kubelet, "default", pod("plain", nil), false)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `node "n1" can only create mirror pods`) {
		t.Fatalf("kubelet creating an ordinary pod: %v", err)
	}
	m := pod("static-n1", nil)
	m.Metadata.Annotations = map[string]string{"kubernetes.io/config.mirror": "hash"}
	m.Spec.NodeName = "n1"
	if _, err := reg.Create(kubelet, "default", m, false); err != nil {
		t.Fatalf("kubelet creating its mirror pod: %v", err)
	}
	other := &corev1.Node{Metadata: &metav1.ObjectMeta{Name: "n2"}}
	if _, err := s.API.Registry("nodes").Create(kubelet, "", other, false); !apierrors.IsForbidden(err) {
		t.Fatalf("kubelet registering another node: %v", err)
	}
}

// A pod stored before defaults existed (written straight to etcd here) can
// still be updated: the stored spec is defaulted before the new one is
// compared with it, as Kubernetes defaults what it reads.
func TestObjectStoredWithoutDefaultsCanBeUpdated(t *testing.T) {
	s, pods := startServer(t)
	ctx := ctxFor(t)
	raw := pod("legacy", nil)
	raw.Metadata.Uid = "6b3c1d2e-0000-4000-8000-000000000001"
	codec := storage.Codec{APIVersion: "v1", Kind: "Pod", New: func() object.Object { return &corev1.Pod{} }}
	if _, err := storage.NewStore(s.Etcd.Client, 5*time.Second).Create(ctx, "/registry/pods/default/legacy", codec, raw); err != nil {
		t.Fatal(err)
	}
	cur, err := pods.Get(ctx, "default", "legacy")
	if err != nil {
		t.Fatal(err)
	}
	if cur.GetSpec().GetRestartPolicy() != "" {
		t.Fatalf("the raw write was defaulted: %v", cur.GetSpec())
	}
	// A status write (the kubelet's) works too.
	st := object.Copy(cur)
	st.Status = &corev1.PodStatus{Phase: "Running"}
	if _, err := pods.UpdateStatus(ctx, st); err != nil {
		t.Fatalf("status update of a pod stored without defaults: %v", err)
	}
	if cur, err = pods.Get(ctx, "default", "legacy"); err != nil {
		t.Fatal(err)
	}
	cur.Metadata.Labels = map[string]string{"touched": "yes"}
	cur.Spec.Containers[0].Image = "registry.podline:5000/demo/web:2.0"
	next, err := pods.Update(ctx, cur)
	if err != nil {
		t.Fatalf("update of a pod stored without defaults: %v", err)
	}
	if next.GetSpec().GetRestartPolicy() != "Always" || next.GetMetadata().GetGeneration() != cur.GetMetadata().GetGeneration()+1 {
		t.Fatalf("after update: restartPolicy %q generation %d (was %d)", next.GetSpec().GetRestartPolicy(), next.GetMetadata().GetGeneration(), cur.GetMetadata().GetGeneration())
	}
	cur.Spec.RestartPolicy = "Never"
	cur.Metadata.ResourceVersion = next.GetMetadata().GetResourceVersion()
	if _, err := pods.Update(ctx, cur); !apierrors.IsInvalid(err) {
		t.Fatalf("changing restartPolicy: %v, want Invalid", err)
	}
}
