package main

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kubectlBinary is the real kubectl at the repository's root (make kubectl).
const kubectlBinary = "../../../bin/kubectl"

// The real kubectl finds the built plugin on PATH as `kubectl birth` and
// hands it its arguments, flags included.
func TestKubectlRunsThePluginFromPath(t *testing.T) {
	kubectl, err := filepath.Abs(kubectlBinary)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kubectl); err != nil {
		t.Skipf("%s not built (make kubectl builds it): %v", kubectlBinary, err)
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "kubectl-birth"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	c := startCluster(t)
	c.send(t, context.Background(), http.MethodPost, "/api/v1/namespaces/default/pods", podJSON("lone", "", nil), nil)
	c.recordEvent(t, "lone", "default-scheduler", "Scheduled", "Successfully assigned default/lone to worker-1", time.Now())

	kubectlRun := func(args ...string) (string, int) {
		cmd := exec.Command(kubectl, args...)
		cmd.Env = append(os.Environ(), "PATH="+dir, "KUBECONFIG="+c.kubeconfig, "HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return string(out), exit.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	out, code := kubectlRun("birth", "pod/lone", "--jaeger", closedURL(t), "--width", "100")
	if code != 0 || !strings.Contains(out, "Birth of pod default/lone") || !strings.Contains(out, "Scheduled") {
		t.Errorf("kubectl birth pod/lone: exit %d\n%s", code, out)
	}
	out, code = kubectlRun("birth", "pod/nope", "-n", "default")
	if code != 1 || !strings.Contains(out, `Error from server (NotFound): pods "nope" not found`) {
		t.Errorf("kubectl birth pod/nope: exit %d\n%s", code, out)
	}
}
