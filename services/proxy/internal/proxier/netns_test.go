package proxier

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// needRootNFT skips tb unless it runs as root with nft and ip present.
func needRootNFT(tb testing.TB) {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("needs root (network namespaces and nftables)")
	}
	for _, bin := range []string{"nft", "ip"} {
		if _, err := exec.LookPath(bin); err != nil {
			tb.Skipf("needs %s (apt-get install -y nftables iproute2): %v", bin, err)
		}
	}
}

// sh runs a command line, failing tb with its output on error.
func sh(tb testing.TB, args ...string) {
	tb.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		tb.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// newNetns adds a throwaway network namespace, deleted at cleanup (with
// its interfaces and nftables tables).
func newNetns(tb testing.TB, role string) string {
	tb.Helper()
	name := fmt.Sprintf("plproxy-%s-%d", role, os.Getpid())
	_ = exec.Command("ip", "netns", "del", name).Run()
	sh(tb, "ip", "netns", "add", name)
	tb.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	sh(tb, "ip", "-n", name, "link", "set", "lo", "up")
	return name
}

// inNetns runs fn on an OS thread moved into the namespace name: sockets
// it opens and processes it starts (nft) live there. The thread is never
// given back to the runtime, which ends it with the goroutine.
func inNetns(name string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		f, err := os.Open("/var/run/netns/" + name)
		if err != nil {
			errc <- err
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("setns %s: %w", name, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// enterNetns moves the calling goroutine's thread into name for good (a
// benchmark's goroutine, which ends after one run).
func enterNetns(tb testing.TB, name string) {
	tb.Helper()
	runtime.LockOSThread()
	f, err := os.Open("/var/run/netns/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		tb.Fatal(err)
	}
}
