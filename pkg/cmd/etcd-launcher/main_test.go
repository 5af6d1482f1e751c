package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"podline.dev/pkg/jaegertest"
)

// The test binary is the launcher when LAUNCHER_TEST_MAIN is set, so the
// tests can signal it as a container runtime signals PID 1.
func TestMain(m *testing.M) {
	if os.Getenv("LAUNCHER_TEST_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// startLauncher runs the launcher with child as the command it launches (a
// shell script standing in for etcd) and returns it once the child has
// printed its first line, which it returns too.
func startLauncher(t *testing.T, child string) (*exec.Cmd, string) {
	t.Helper()
	ca := filepath.Join(jaegertest.NewPKI(t, t.TempDir()), "ca.crt")
	cmd := exec.Command(os.Args[0], "--otlp-listen=127.0.0.1:0", "--otlp-upstream=jaeger:4317",
		"--otlp-ca-file="+ca, "--", "/bin/sh", "-c", child)
	cmd.Env = append(os.Environ(), "LAUNCHER_TEST_MAIN=1", "ETCD_NAME=etcd-7")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	first := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		first <- strings.TrimSpace(line)
	}()
	select {
	case line := <-first:
		return cmd, line
	case <-time.After(30 * time.Second):
		t.Fatal("the child printed nothing within 30s")
		return nil, ""
	}
}

// exitStatus waits for cmd and returns its exit status.
func exitStatus(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode()
}

// SIGTERM to the launcher (docker stop) reaches etcd, which sees the
// launcher's environment, and the launcher exits with etcd's status.
func TestLauncherPassesSIGTERMAndExitsWithTheChildsStatus(t *testing.T) {
	cmd, line := startLauncher(t, `trap 'exit 7' TERM; echo "up as $ETCD_NAME"; while :; do sleep 0.05; done`)
	if line != "up as etcd-7" {
		t.Fatalf("child printed %q, want its environment's ETCD_NAME", line)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if got := exitStatus(t, cmd); got != 7 {
		t.Fatalf("launcher exited %d, want the child's 7", got)
	}
}

// A child killed by a signal is reported as a shell would: 128 + signal.
func TestLauncherReportsAChildKilledByASignal(t *testing.T) {
	cmd, _ := startLauncher(t, `echo up; kill -KILL $$`)
	if got := exitStatus(t, cmd); got != 128+int(syscall.SIGKILL) {
		t.Fatalf("launcher exited %d, want %d", got, 128+int(syscall.SIGKILL))
	}
}
