package test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"podline.dev/pkg/apierrors"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/kubelet/internal/staticpods"
)

const staticWeb = `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: kube-system
  labels: {tier: control-plane}
spec:
  containers:
  - name: web
    image: registry.podline:5000/demo/web:1.0
`

func mirrorOf(t *testing.T, n *fakeNode, name string) (*corev1.Pod, error) {
	t.Helper()
	return n.pods.Get(context.Background(), "kube-system", name)
}

func TestStaticPodRunsWithAMirrorThatComesBackWhenDeleted(t *testing.T) {
	dir := t.TempDir()
	manifest := filepath.Join(dir, "web.yaml")
	if err := os.WriteFile(manifest, []byte(staticWeb), 0o644); err != nil {
		t.Fatal(err)
	}
	n := startFakeNode(t, nil, fakeOpts{staticDir: dir})

	// File in: the pod runs and its mirror appears, annotated, Running.
	var first *corev1.Pod
	eventually(t, 10*time.Second, "mirror pod Running", func() (bool, string) {
		m, err := mirrorOf(t, n, "web-"+nodeName)
		if err != nil {
			return false, err.Error()
		}
		first = m
		return m.GetStatus().GetPhase() == "Running", describe(m)
	})
	ann := first.GetMetadata().GetAnnotations()
	if ann[staticpods.ConfigSourceAnnotation] != "file" || ann[staticpods.ConfigMirrorAnnotation] == "" {
		t.Fatalf("mirror annotations %v", ann)
	}
	if refs := first.GetMetadata().GetOwnerReferences(); len(refs) != 1 || refs[0].GetKind() != "Node" {
		t.Fatalf("mirror owner %v", refs)
	}
	if got := len(n.runtime.Running("web")); got != 1 {
		t.Fatalf("%d web containers running", got)
	}

	// Mirror deleted through the API (graceful, as kubectl does): it comes
	// back as a new object, and the static pod keeps running untouched.
	if _, err := n.pods.Delete(context.Background(), "kube-system", "web-"+nodeName, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "mirror pod recreated", func() (bool, string) {
		m, err := mirrorOf(t, n, "web-"+nodeName)
		if err != nil {
			return false, err.Error()
		}
		return m.GetMetadata().GetUid() != first.GetMetadata().GetUid() && m.GetMetadata().GetDeletionTimestamp() == nil &&
			m.GetStatus().GetPhase() == "Running", describe(m)
	})
	running := n.runtime.Running("web")
	if len(running) != 1 {
		t.Fatalf("static pod's container restarted or duplicated: %v", running)
	}

	// File edited: a new version replaces the old (new hash, new container).
	if err := os.WriteFile(manifest, []byte(staticWeb+"  restartPolicy: Always\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "mirror pod of the edited file", func() (bool, string) {
		m, err := mirrorOf(t, n, "web-"+nodeName)
		if err != nil {
			return false, err.Error()
		}
		return m.GetMetadata().GetAnnotations()[staticpods.ConfigMirrorAnnotation] != ann[staticpods.ConfigMirrorAnnotation] &&
			m.GetStatus().GetPhase() == "Running", describe(m)
	})
	eventually(t, 10*time.Second, "old container replaced", func() (bool, string) {
		r := n.runtime.Running("web")
		return len(r) == 1 && r[0] != running[0], ""
	})

	// File removed: the pod stops and its mirror goes.
	if err := os.Remove(manifest); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "mirror pod deleted", func() (bool, string) {
		_, err := mirrorOf(t, n, "web-"+nodeName)
		return apierrors.IsNotFound(err), ""
	})
	eventually(t, 10*time.Second, "static pod stopped", func() (bool, string) {
		return len(n.runtime.Running("web")) == 0, ""
	})
}

func TestStaticPodRunsWithoutAnAPIServer(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "web.yaml"), []byte(staticWeb), 0o644); err != nil {
		t.Fatal(err)
	}
	n := startFakeNode(t, nil, fakeOpts{staticDir: dir, noAPI: true})
	eventually(t, 10*time.Second, "static pod running with no apiserver", func() (bool, string) {
		return len(n.runtime.Running("web")) == 1, strings.Join(n.runtime.Calls(), ", ")
	})
}
