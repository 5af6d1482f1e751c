package test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"podline.dev/pkg/testenv"
)

// natsServer is a nats-server process with JetStream in a temp directory.
type natsServer struct {
	URL  string
	bin  string
	dir  string
	port int
	cmd  *exec.Cmd
	// conf is a configuration file (-c), with its monitoring port moved
	// to monitor; none when empty.
	conf    string
	monitor int
}

// natsBinary finds bin/nats-server at the workspace root.
func natsBinary(t *testing.T) string {
	t.Helper()
	dir, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin", "nats-server")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("%s is missing: run `make tools` (make test builds it first)", bin)
	}
	return bin
}

// startNATS runs nats-server until the test ends.
func startNATS(t *testing.T) *natsServer {
	t.Helper()
	return startNATSWith(t, "")
}

// startNATSWith runs nats-server with the configuration file conf (none
// when empty) until the test ends; the flags set the address, port and
// JetStream's directory.
func startNATSWith(t *testing.T, conf string) *natsServer {
	t.Helper()
	port := testenv.FreePort(t)
	n := &natsServer{URL: fmt.Sprintf("nats://127.0.0.1:%d", port), bin: natsBinary(t), dir: t.TempDir(), port: port, conf: conf}
	if conf != "" {
		n.monitor = testenv.FreePort(t)
	}
	n.start(t)
	t.Cleanup(n.stop)
	return n
}

func (n *natsServer) start(t *testing.T) {
	t.Helper()
	args := []string{"-js", "-sd", n.dir, "-a", "127.0.0.1", "-p", fmt.Sprint(n.port)}
	if n.conf != "" {
		args = append(args, "-c", n.conf, "-m", fmt.Sprint(n.monitor))
	}
	n.cmd = exec.Command(n.bin, args...)
	log, err := os.OpenFile(filepath.Join(n.dir, "nats-server.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	n.cmd.Stdout, n.cmd.Stderr = log, log
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", n.port))
		if err == nil {
			_ = c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nats-server did not listen: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (n *natsServer) stop() {
	if n.cmd != nil && n.cmd.Process != nil {
		_ = n.cmd.Process.Kill()
		_ = n.cmd.Wait()
		n.cmd = nil
	}
}
