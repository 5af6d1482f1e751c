package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"podline.dev/pkg/testenv"
)

// TestCrictlSeesWhatRuns drives bin/crictl against podline-cri: pods, ps,
// images, inspectp, logs and exec show the sandbox and container made over
// the CRI.
func TestCrictlSeesWhatRuns(t *testing.T) {
	e := requireEnv(t)
	crictl := filepath.Join(e.repo, "bin", "crictl")
	if _, err := os.Stat(crictl); err != nil {
		t.Skip("needs bin/crictl (make cri-tools)")
	}
	n := startNode(t)
	sbCfg := makeSandbox("seen", filepath.Join(n.dir, "pods", "seen")).obj()
	sb := n.runPod(sbCfg)
	id := n.runContainer(sb, sbCfg, makeContainer("app", "sh", "-c", "echo seen-by-crictl; exec sleep 3600").obj())

	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(crictl, append([]string{"--runtime-endpoint", "unix://" + n.cfg.Listen, "--image-endpoint", "unix://" + n.cfg.Listen, "--timeout", "30s"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("crictl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"version"}, []string{"RuntimeName:  podline-cri", "RuntimeApiVersion:  v1"}},
		{[]string{"pods"}, []string{sb[:13], "seen", "Ready", "default"}},
		{[]string{"ps"}, []string{id[:13], "app", "Running", sb[:13]}},
		{[]string{"images"}, []string{"podline.test/busybox", "docker.io/podline/pause"}},
		{[]string{"inspectp", sb[:12]}, []string{`"state": "SANDBOX_READY"`, `"ip": "10.244.99.`}},
		{[]string{"exec", id[:12], "hostname"}, []string{"seen"}},
		{[]string{"stats"}, []string{id[:13]}},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out := run(tc.args...)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Fatalf("crictl %s lacks %q:\n%s", strings.Join(tc.args, " "), w, out)
				}
			}
		})
	}
	testenv.Eventually(t, 30*time.Second, "crictl logs", func() error {
		if out := run("logs", id[:12]); !strings.Contains(out, "seen-by-crictl") {
			return &missing{out}
		}
		return nil
	})
}

type missing struct{ out string }

func (m *missing) Error() string { return "logs: " + m.out }
