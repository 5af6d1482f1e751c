package test

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/vishvananda/netlink"
)

// envInNetNS marks the re-executed test binary.
const envInNetNS = "PODLINE_CRI_TEST_IN_NETNS"

func TestMain(m *testing.M) {
	if os.Geteuid() == 0 && os.Getenv(envInNetNS) == "" {
		if _, err := exec.LookPath("unshare"); err == nil {
			os.Exit(reexecInNetNS())
		}
	}
	if os.Getenv(envInNetNS) != "" {
		if err := loUp(); err != nil {
			fmt.Fprintln(os.Stderr, "bring up lo:", err)
			os.Exit(1)
		}
	}
	installTracing()
	code := m.Run()
	stopShared()
	os.Exit(code)
}

// reexecInNetNS runs this test binary again with the same arguments in a
// new network namespace.
func reexecInNetNS() int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cmd := exec.Command("unshare", append([]string{"--net", "--", self}, os.Args[1:]...)...)
	cmd.Env = append(os.Environ(), envInNetNS+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func loUp() error {
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return err
	}
	return netlink.LinkSetUp(lo)
}
