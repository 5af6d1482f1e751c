package staticpods

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

const webYAML = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - name: web
    image: registry.podline:5000/demo/web:1.0
    ports: [{containerPort: 8080}]
`

func TestParseNamesThePodAfterTheNodeAndHashesTheFile(t *testing.T) {
	pod, _, err := Parse([]byte(webYAML), "/etc/kubernetes/manifests/web.yaml", "node-1")
	if err != nil {
		t.Fatal(err)
	}
	md := pod.GetMetadata()
	if md.GetName() != "web-node-1" || md.GetNamespace() != "default" || pod.GetSpec().GetNodeName() != "node-1" {
		t.Fatalf("name %s/%s node %s", md.GetNamespace(), md.GetName(), pod.GetSpec().GetNodeName())
	}
	if md.GetAnnotations()[ConfigSourceAnnotation] != "file" || md.GetAnnotations()[ConfigHashAnnotation] != md.GetUid() || len(md.GetUid()) != 32 {
		t.Fatalf("annotations %v uid %s", md.GetAnnotations(), md.GetUid())
	}
	again, _, _ := Parse([]byte(webYAML), "/etc/kubernetes/manifests/web.yaml", "node-1")
	if again.GetMetadata().GetUid() != md.GetUid() {
		t.Fatal("the same file gave another UID")
	}
	edited, _, _ := Parse([]byte(webYAML+"  restartPolicy: Always\n"), "/etc/kubernetes/manifests/web.yaml", "node-1")
	if edited.GetMetadata().GetUid() == md.GetUid() {
		t.Fatal("an edited file kept its UID")
	}
	if !IsStatic(pod) || IsMirror(pod) {
		t.Fatal("static pod misclassified")
	}
}

func TestParseReadsJSONAndRejectsOtherKinds(t *testing.T) {
	if _, _, err := Parse([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"x"}]}}`), "a.json", "n"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Parse([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n"), "s.yaml", "n"); !errors.Is(err, ErrNotAPod) {
		t.Fatalf("a Service parsed: %v", err)
	}
	if _, warnings, err := Parse([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {bogus: 1}\n"), "a.yaml", "n"); err != nil || len(warnings) != 1 {
		t.Fatalf("unknown field: %v %v", warnings, err)
	}
}

func TestReadDirSkipsHiddenAndForeignFiles(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"web.yaml": webYAML, ".web.yaml.swp": webYAML, "README": "hi", "bad.yaml": "kind: ["} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pods, errs := ReadDir(dir, "n")
	if len(pods) != 1 || len(errs) != 1 {
		t.Fatalf("%d pods, errors %v", len(pods), errs)
	}
}

func TestMirrorCarriesTheHashAndIsOwnedByTheNode(t *testing.T) {
	pod, _, _ := Parse([]byte(webYAML), "web.yaml", "n")
	node := &corev1.Node{Metadata: &metav1.ObjectMeta{Name: "n", Uid: "node-uid"}}
	m := Mirror(pod, node)
	if MirrorHash(m) != pod.GetMetadata().GetUid() || m.GetMetadata().GetUid() != "" || !IsMirror(m) {
		t.Fatalf("mirror %v", m.GetMetadata())
	}
	if refs := m.GetMetadata().GetOwnerReferences(); len(refs) != 1 || refs[0].GetUid() != "node-uid" {
		t.Fatalf("owner %v", refs)
	}
	if pod.GetMetadata().GetAnnotations()[ConfigMirrorAnnotation] != "" {
		t.Fatal("Mirror changed the static pod")
	}
}
