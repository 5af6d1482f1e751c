package containerd

import (
	"context"
	"io"
	"net"
	"os"
	"testing"

	"github.com/containerd/containerd/v2/pkg/netns"
	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/vishvananda/netlink"
)

// newNetNS pins a new network namespace with its lo up, as a sandbox's is
// once CNI's loopback plugin ran, and removes it when the test ends.
func newNetNS(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("creating a network namespace needs root")
	}
	n, err := netns.NewNetNS(t.TempDir())
	if err != nil {
		t.Skipf("cannot create a network namespace here: %v", err)
	}
	t.Cleanup(func() { _ = n.Remove() })
	if err := ns.WithNetNSPath(n.GetPath(), func(ns.NetNS) error {
		lo, err := netlink.LinkByName("lo")
		if err != nil {
			return err
		}
		return netlink.LinkSetUp(lo)
	}); err != nil {
		t.Fatal(err)
	}
	return n.GetPath()
}

// A port-forward connection is made from inside the pod's network
// namespace: it reaches a server listening on the namespace's 127.0.0.1,
// which the host's 127.0.0.1 does not.
func TestDialInNetNSReachesThePodsLoopback(t *testing.T) {
	path := newNetNS(t)
	var lis net.Listener
	if err := ns.WithNetNSPath(path, func(ns.NetNS) error {
		var err error
		lis, err = net.Listen("tcp", "127.0.0.1:0")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	addr := lis.Addr().String()

	conn, err := dialInNetNS(context.Background(), path, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "ping"); err != nil {
		t.Fatal(err)
	}
	_ = conn.(*net.TCPConn).CloseWrite()
	got, _ := io.ReadAll(conn)
	if string(got) != "ping" {
		t.Fatalf("echoed %q", got)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		// Only a coincidence of ports on the host could answer.
		t.Logf("the host's %s answered too", addr)
	}
	if _, err := dialInNetNS(context.Background(), path+"-missing", addr); err == nil {
		t.Fatal("dialled in a namespace that does not exist")
	} else if _, ok := err.(ns.NSPathNotExistErr); !ok {
		t.Fatalf("missing namespace: %T %v", err, err)
	}
}
