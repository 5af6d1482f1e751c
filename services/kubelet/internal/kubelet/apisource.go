package kubelet

import (
	"context"
	"net"
	"os"
	"strings"

	"google.golang.org/grpc"

	"podline.dev/pkg/client"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/kubelet/internal/volumes"
)

// apiSource reads ConfigMaps and Secrets from the apiserver.
type apiSource struct{ conn grpc.ClientConnInterface }

var _ volumes.Source = apiSource{}

func (s apiSource) ConfigMap(ctx context.Context, ns, name string) (*corev1.ConfigMap, error) {
	return client.ConfigMaps(s.conn).Get(ctx, ns, name)
}

func (s apiSource) Secret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	return client.Secrets(s.conn).Get(ctx, ns, name)
}

// nodeAddresses are InternalIP for each node IP and the Hostname.
func nodeAddresses(name string, ips []string) []*corev1.NodeAddress {
	var out []*corev1.NodeAddress
	for _, ip := range ips {
		out = append(out, &corev1.NodeAddress{Type: "InternalIP", Address: ip})
	}
	return append(out, &corev1.NodeAddress{Type: "Hostname", Address: name})
}

// DetectNodeIP is the first global unicast IPv4 address of the machine's
// interfaces, or "" when it has none.
func DetectNodeIP() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.IsGlobalUnicast() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}

// SystemInfo describes the machine for the Node's nodeInfo.
func SystemInfo(arch, runtimeVersion string) *corev1.NodeSystemInfo {
	read := func(p string) string {
		b, _ := os.ReadFile(p)
		return strings.TrimSpace(string(b))
	}
	osImage := "Linux"
	for _, line := range strings.Split(read("/etc/os-release"), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			osImage = strings.Trim(v, `"`)
		}
	}
	return &corev1.NodeSystemInfo{
		MachineId:               read("/etc/machine-id"),
		SystemUuid:              read("/sys/class/dmi/id/product_uuid"),
		BootId:                  read("/proc/sys/kernel/random/boot_id"),
		KernelVersion:           read("/proc/sys/kernel/osrelease"),
		OsImage:                 osImage,
		ContainerRuntimeVersion: runtimeVersion,
		KubeletVersion:          Version,
		OperatingSystem:         "linux",
		Architecture:            arch,
	}
}
