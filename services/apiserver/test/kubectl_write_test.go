package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"podline.dev/services/apiserver/apiservertest"
)

// kubectl runs the real kubectl against a test apiserver.
type kubectl struct {
	t         *testing.T
	bin, kcfg string
	dir       string
}

// newKubectl finds $KUBECTL or the repository's bin/kubectl; without
// either the test is skipped.
func newKubectl(t *testing.T, s *apiservertest.Server) *kubectl {
	bin := os.Getenv("KUBECTL")
	if bin == "" {
		var err error
		if bin, err = filepath.Abs("../../../bin/kubectl"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skip("bin/kubectl is not built (make kubectl), and $KUBECTL is not set")
	}
	dir := t.TempDir()
	kcfg := filepath.Join(dir, "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"" + s.URL + "\"}\n" +
		"contexts:\n- name: c\n  context: {cluster: c, user: u, namespace: default}\ncurrent-context: c\nusers:\n- name: u\n  user: {}\n"
	if err := os.WriteFile(kcfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return &kubectl{t: t, bin: bin, kcfg: kcfg, dir: dir}
}

// run returns kubectl's combined output and whether it exited 0.
func (k *kubectl) run(args ...string) (string, bool) {
	k.t.Helper()
	cmd := exec.Command(k.bin, append([]string{"--kubeconfig", k.kcfg}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+k.dir)
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

func (k *kubectl) must(args ...string) string {
	k.t.Helper()
	out, ok := k.run(args...)
	if !ok {
		k.t.Fatalf("kubectl %s: %s", strings.Join(args, " "), out)
	}
	return out
}

func (k *kubectl) file(name, content string) string {
	p := filepath.Join(k.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		k.t.Fatal(err)
	}
	return p
}

const kubectlDeploy = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.podline:5000/demo/web:IMAGE
        ports: [{containerPort: 80}]
      - name: side
        image: registry.podline:5000/demo/side:1.0
`

// The write side of the real kubectl: client-side apply twice (create with
// the last-applied annotation, then a strategic merge patch of the image),
// scale, patch of each type, server dry runs, delete --all, and server-side
// apply with its conflict.
func TestKubectlWriteCommands(t *testing.T) {
	s := apiservertest.Start(t)
	k := newKubectl(t, s)
	f := k.file("deploy.yaml", strings.Replace(kubectlDeploy, "IMAGE", "1.0", 1))
	if out := k.must("apply", "-f", f); !strings.Contains(out, "deployment.apps/web created") {
		t.Fatalf("first apply: %s", out)
	}
	k.file("deploy.yaml", strings.Replace(kubectlDeploy, "IMAGE", "2.0", 1))
	out := k.must("apply", "-f", f, "-v=8")
	if !strings.Contains(out, `verb="PATCH"`) || !strings.Contains(out, "deployment.apps/web configured") {
		t.Fatalf("second apply sent no PATCH: %s", out)
	}
	if got := k.must("get", "deploy", "web", "-o", "jsonpath={.spec.template.spec.containers[*].image} {.metadata.generation}"); got != "registry.podline:5000/demo/web:2.0 registry.podline:5000/demo/side:1.0 2" {
		t.Fatalf("after the second apply: %q", got)
	}

	k.must("scale", "deploy", "web", "--replicas=3")
	k.must("patch", "deploy", "web", "--type=json", "-p", `[{"op":"test","path":"/spec/replicas","value":3},{"op":"replace","path":"/spec/replicas","value":4}]`)
	k.must("patch", "deploy", "web", "--type=merge", "-p", `{"metadata":{"labels":{"tier":"front"}}}`)
	k.must("patch", "deploy", "web", "-p", `{"spec":{"template":{"spec":{"containers":[{"name":"side","$patch":"delete"}]}}}}`)
	if got := k.must("get", "deploy", "web", "-o", "jsonpath={.spec.replicas} {.metadata.labels.tier} {.spec.template.spec.containers[*].name}"); got != "4 front web" {
		t.Fatalf("after scale and patches: %q", got)
	}
	if out, ok := k.run("patch", "deploy", "web", "--type=json", "-p", `[{"op":"test","path":"/spec/replicas","value":1}]`); ok ||
		!strings.Contains(out, "test failed") {
		t.Fatalf("failed test op: %v %s", ok, out)
	}
	k.must("scale", "deploy", "web", "--replicas=1", "--dry-run=server")
	if got := k.must("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}"); got != "4" {
		t.Fatalf("a server dry run scaled: %q", got)
	}

	for _, p := range []string{"p1", "p2"} {
		k.must("run", p, "--image=registry.podline:5000/demo/web:1.0")
	}
	k.must("delete", "pods", "--all", "--dry-run=server")
	if got := k.must("get", "pods", "-o", "name"); strings.Count(got, "pod/") != 2 {
		t.Fatalf("a server dry run deleted: %q", got)
	}
	k.must("delete", "pods", "--all", "--wait=false")
	if got := k.must("get", "pods", "-o", "name"); got != "" {
		t.Fatalf("left after delete --all: %q", got)
	}

	ssa := k.file("ssa.yaml", strings.Replace(strings.Replace(kubectlDeploy, "IMAGE", "1.0", 1), "name: web\nspec", "name: ssa\nspec", 1))
	if out := k.must("apply", "--server-side", "-f", ssa); !strings.Contains(out, "deployment.apps/ssa serverside-applied") {
		t.Fatalf("server-side apply: %s", out)
	}
	k.must("scale", "deploy", "ssa", "--replicas=5")
	out, ok := k.run("apply", "--server-side", "-f", ssa)
	if ok || !strings.Contains(out, `Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas`) {
		t.Fatalf("conflicting server-side apply: %v %s", ok, out)
	}
	k.must("apply", "--server-side", "--force-conflicts", "-f", ssa)
	if got := k.must("get", "deploy", "ssa", "-o", "jsonpath={.spec.replicas}"); got != "2" {
		t.Fatalf("after the forced apply: %q", got)
	}
}
