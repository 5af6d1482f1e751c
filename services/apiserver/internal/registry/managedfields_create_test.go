package registry

import (
	"context"
	"testing"
	"time"

	"podline.dev/pkg/k8sjson"
	"podline.dev/pkg/object"
	"podline.dev/proto/apis"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/internal/patch"
)

// richPod has a field of every shape Kubernetes JSON gives: merged lists
// keyed by strings and numbers, sets, atomic lists, maps, quantities,
// IntOrString, Time, empty messages, optional zeros, and strings that
// encoding/json escapes.
const richPod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-0","namespace":"default",
 "labels":{"app":"web","tier":"front&end"},"annotations":{"note":"<b>bold</b> \u2028 ünïcode","empty":""},
 "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-1","uid":"u-1","controller":true,"blockOwnerDeletion":true}],
 "finalizers":["example.com/a","example.com/<b>"]},
 "spec":{"automountServiceAccountToken":false,"enableServiceLinks":false,"priority":0,"nodeSelector":{"disk":"ssd"},
  "initContainers":[{"name":"init","image":"busybox","command":["sh","-c","true"]}],
  "containers":[{"name":"web","image":"nginx:1.27","args":["-g","daemon off;"],
    "ports":[{"containerPort":80,"name":"http"},{"containerPort":443,"protocol":"TCP","hostPort":8443}],
    "env":[{"name":"POD_IP","valueFrom":{"fieldRef":{"fieldPath":"status.podIP"}}},{"name":"GREETING","value":"hello\tworld"},{"name":"ZERO","value":""}],
    "resources":{"limits":{"cpu":"500m","memory":"128Mi"},"requests":{"cpu":"250m"}},
    "livenessProbe":{"httpGet":{"path":"/healthz","port":"http"},"initialDelaySeconds":3},
    "readinessProbe":{"tcpSocket":{"port":8080},"periodSeconds":5},
    "volumeMounts":[{"name":"data","mountPath":"/data"},{"name":"cfg","mountPath":"/etc/cfg","readOnly":true}],
    "securityContext":{"runAsNonRoot":true,"runAsUser":1000,"capabilities":{"drop":["ALL"]}}},
   {"name":"side","image":"side:1"}],
  "volumes":[{"name":"data","emptyDir":{}},{"name":"cfg","configMap":{"name":"cfg","items":[{"key":"a","path":"a"}]}}],
  "tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],
  "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a","b"]}]}]}}},
  "imagePullSecrets":[{"name":"reg"}],"hostAliases":[{"ip":"10.0.0.1","hostnames":["db"]}],
  "topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchLabels":{"app":"web"}}}],
  "securityContext":{},"terminationGracePeriodSeconds":0}}`

const richDeployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default","labels":{"app":"web"},
 "annotations":{"deployment.kubernetes.io/revision":"1"}},
 "spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"},"matchExpressions":[{"key":"tier","operator":"NotIn","values":["db"]}]},
  "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":0}},"revisionHistoryLimit":10,"paused":false,
  "template":{"metadata":{"labels":{"app":"web"},"creationTimestamp":"2026-01-02T03:04:05Z"},"spec":{
   "containers":[{"name":"web","image":"registry.podline:5000/demo/web:1.0","ports":[{"containerPort":8080}],
     "env":[{"name":"A","value":"1"},{"name":"B","valueFrom":{"resourceFieldRef":{"resource":"limits.cpu","divisor":"1m"}}}],
     "resources":{"requests":{"cpu":"100m"}}}],
   "volumes":[{"name":"tmp","emptyDir":{"sizeLimit":"1Gi"}}]}}},
 "status":{"replicas":3,"conditions":[{"type":"Available","status":"True"}]}}`

func mustUnmarshal[T object.Object](t *testing.T, data string, obj T) T {
	t.Helper()
	if _, err := k8sjson.Unmarshal([]byte(data), obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// TestCreateRecordsWhatTheValuesPathRecorded checks that a create's
// managedFields, read from the object's JSON text, are those the diff of
// decoded JSON values gives, byte for byte.
func TestCreateRecordsWhatTheValuesPathRecorded(t *testing.T) {
	deployments, _ := apis.Lookup("apps", "deployments")
	deployRegistry, err := New(deployments, nil, WithClock(func() time.Time { return time.Unix(1_800_000_000, 0) }))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		r    *Registry
		obj  object.Object
	}{
		{"pod", podRegistry(t), mustUnmarshal(t, richPod, &corev1.Pod{})},
		{"deployment", deployRegistry, mustUnmarshal(t, richDeployment, &appsv1.Deployment{})},
	} {
		t.Run(c.name, func(t *testing.T) {
			values, err := toValues(c.obj)
			if err != nil {
				t.Fatal(err)
			}
			want := encodeManaged(patch.Managed(nil).Update(nil, values, "kubectl", c.r.codec.APIVersion, "", c.r.now().Unix(), c.r.untracked("")))
			got := object.Copy(c.obj)
			if err := c.r.recordUpdate(WithFieldManager(context.Background(), "kubectl"), nil, got, ""); err != nil {
				t.Fatal(err)
			}
			entries := got.GetMetadata().GetManagedFields()
			if len(entries) != 1 || len(want) != 1 {
				t.Fatalf("entries: got %v, want %v", entries, want)
			}
			if g, w := entries[0].GetFieldsV1(), want[0].GetFieldsV1(); g != w {
				t.Fatalf("fieldsV1\n got %s\nwant %s", g, w)
			}
			if g, w := entries[0].String(), want[0].String(); g != w {
				t.Fatalf("entry\n got %s\nwant %s", g, w)
			}
		})
	}
}
