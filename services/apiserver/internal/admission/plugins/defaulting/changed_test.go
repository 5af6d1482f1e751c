package defaulting

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/k8sjson"
	"podline.dev/pkg/object"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
	rbacv1 "podline.dev/proto/rbac/v1"
)

// changeSeeds are objects of every kind Apply defaults, each missing one
// default or none.
var changeSeeds = []struct {
	kind func() object.Object
	json string
}{
	{pod, `{}`},
	{pod, `{"spec":{}}`},
	{pod, `{"spec":{"dnsPolicy":"ClusterFirst","restartPolicy":"Always","terminationGracePeriodSeconds":30,"securityContext":{},
		"schedulerName":"default-scheduler","enableServiceLinks":true}}`},
	{pod, `{"spec":{"dnsPolicy":"ClusterFirst","restartPolicy":"Always","terminationGracePeriodSeconds":30,"securityContext":{},
		"schedulerName":"default-scheduler","enableServiceLinks":true,"serviceAccount":"sa"}}`},
	{pod, `{"spec":{"dnsPolicy":"ClusterFirst","restartPolicy":"Always","terminationGracePeriodSeconds":30,"securityContext":{},
		"schedulerName":"default-scheduler","enableServiceLinks":true,"containers":[{"name":"a","image":"a","imagePullPolicy":"Always",
		"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","resources":{"limits":{"cpu":"1"},"requests":{"cpu":"2"}},
		"ports":[{"containerPort":80,"protocol":"UDP"}],"readinessProbe":{"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3}}]}}`},
	{pod, `{"spec":{"containers":[{"name":"a","image":"a","resources":{"limits":{"cpu":"1"}},
		"lifecycle":{"preStop":{"httpGet":{"port":80}}},"env":[{"name":"N","valueFrom":{"fieldRef":{"fieldPath":"spec.nodeName"}}}]}],
		"volumes":[{"name":"a"},{"name":"b","secret":{}},{"name":"c","hostPath":{"path":"/x"}},{"name":"d","persistentVolumeClaim":{"claimName":"c"}},
		{"name":"e","projected":{"sources":[{"serviceAccountToken":{"path":"t"}},{"downwardAPI":{"items":[{"path":"p","fieldRef":{"fieldPath":"metadata.name"}}]}}]}},
		{"name":"f","downwardAPI":{"items":[{"path":"p","fieldRef":{"fieldPath":"metadata.name"}}]}}]}}`},
	{deployment, `{}`},
	{deployment, `{"spec":{"strategy":{"type":"Recreate"},"replicas":0,"revisionHistoryLimit":0,"progressDeadlineSeconds":600}}`},
	{deployment, `{"spec":{"template":{}}}`},
	{replicaSet, `{}`},
	{replicaSet, `{"spec":{"replicas":3}}`},
	{service, `{}`},
	{service, `{"spec":{"type":"ClusterIP","sessionAffinity":"None","internalTrafficPolicy":"Cluster","ports":[{"port":0,"protocol":"TCP","targetPort":0}]}}`},
	{service, `{"spec":{"type":"ClusterIP","sessionAffinity":"None","internalTrafficPolicy":"Cluster","ports":[{"port":80,"protocol":"TCP","targetPort":80}]}}`},
	{service, `{"spec":{"type":"ClusterIP","sessionAffinity":"None","internalTrafficPolicy":"Cluster","ports":[{"port":80,"protocol":"TCP","targetPort":0}]}}`},
	{service, `{"spec":{"type":"ExternalName","sessionAffinity":"None"}}`},
	{service, `{"spec":{"type":"NodePort","sessionAffinity":"ClientIP","internalTrafficPolicy":"Cluster","externalTrafficPolicy":"Local",
		"sessionAffinityConfig":{"clientIP":{}}}}`},
	{secret, `{}`},
	{secret, `{"type":"Opaque"}`},
	{roleBinding, `{"subjects":[{"kind":"ServiceAccount","name":"a"},{"kind":"User","name":"u"}]}`},
	{roleBinding, `{"subjects":[{"kind":"Group","name":"g","apiGroup":"rbac.authorization.k8s.io"}]}`},
	{endpoints, `{"subsets":[{"ports":[{"port":80,"protocol":"UDP"}]}]}`},
	{endpoints, `{"subsets":[{"ports":[{"port":80}]}]}`},
	{endpointSlice, `{"ports":[{"port":80}]}`},
	{endpointSlice, `{"ports":[{"port":80,"protocol":"TCP"}]}`},
}

func pod() object.Object           { return &corev1.Pod{} }
func deployment() object.Object    { return &appsv1.Deployment{} }
func replicaSet() object.Object    { return &appsv1.ReplicaSet{} }
func service() object.Object       { return &corev1.Service{} }
func secret() object.Object        { return &corev1.Secret{} }
func roleBinding() object.Object   { return &rbacv1.RoleBinding{} }
func endpoints() object.Object     { return &corev1.Endpoints{} }
func endpointSlice() object.Object { return &discoveryv1.EndpointSlice{} }

// TestApplyReportsExactlyWhenTheObjectChanged checks Apply's report
// against proto.Equal of the object before and after, on every kind, and
// that a second Apply reports nothing.
func TestApplyReportsExactlyWhenTheObjectChanged(t *testing.T) {
	changed, unchanged := 0, 0
	for _, s := range changeSeeds {
		if applyMatchesEqual(t, s.kind(), []byte(s.json)) {
			changed++
		} else {
			unchanged++
		}
	}
	if changed == 0 || unchanged < 5 {
		t.Fatalf("seeds: %d changed, %d unchanged; want both", changed, unchanged)
	}
}

func FuzzApplyReportsExactlyWhenTheObjectChanged(f *testing.F) {
	for i, s := range changeSeeds {
		f.Add(uint8(i), []byte(s.json))
	}
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		applyMatchesEqual(t, changeSeeds[int(kind)%len(changeSeeds)].kind(), data)
	})
}

func applyMatchesEqual(t *testing.T, obj object.Object, data []byte) bool {
	t.Helper()
	if _, err := k8sjson.Unmarshal(data, obj, k8sjson.Ignore); err != nil {
		return false
	}
	before := proto.Clone(obj)
	got := Apply(obj)
	if want := !proto.Equal(before, obj); got != want {
		t.Fatalf("%T %s: Apply reported %v, the object changed: %v", obj, data, got, want)
	}
	if Apply(obj) {
		t.Fatalf("%T %s: a second Apply reported a change", obj, data)
	}
	return got
}
