package server

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestContainerArgsFollowTheCRIRule(t *testing.T) {
	ep, cmd := []string{"/entry"}, []string{"default", "args"}
	cases := []struct {
		name          string
		command, args []string
		want          string
	}{
		{"neither: the image's entrypoint and cmd", nil, nil, "/entry default args"},
		{"args only replace the cmd", nil, []string{"x"}, "/entry x"},
		{"a command drops the image's cmd", []string{"sh"}, nil, "sh"},
		{"command and args", []string{"sh"}, []string{"-c", "true"}, "sh -c true"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := containerArgs(ep, cmd, tc.command, tc.args)
			if err != nil || strings.Join(got, " ") != tc.want {
				t.Fatalf("argv %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := containerArgs(nil, nil, nil, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("no command at all: %v", err)
	}
}

func TestSandboxSysctlsDefaultOnlyForAPodNetwork(t *testing.T) {
	s := &Service{defaultSysctls: map[string]string{"net.ipv4.ip_unprivileged_port_start": "0", "net.ipv4.ping_group_range": "0 2147483647"}}
	pod := &sandbox{Config: &runtimeapi.PodSandboxConfig{Linux: &runtimeapi.LinuxPodSandboxConfig{
		Sysctls: map[string]string{"net.ipv4.ip_unprivileged_port_start": "1024", "kernel.shm_rmid_forced": "1"}}}}
	got := s.sandboxSysctls(pod)
	if got["net.ipv4.ip_unprivileged_port_start"] != "1024" || got["net.ipv4.ping_group_range"] != "0 2147483647" || got["kernel.shm_rmid_forced"] != "1" {
		t.Fatalf("pod network sysctls %v", got)
	}
	host := &sandbox{Config: &runtimeapi.PodSandboxConfig{Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
		NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE}}}}}
	if got := s.sandboxSysctls(host); len(got) != 0 {
		t.Fatalf("host network sysctls %v, want none", got)
	}
}

func TestCapabilityNamesAreSpelledAsTheOCISpecDoes(t *testing.T) {
	for in, want := range map[string]string{"NET_ADMIN": "CAP_NET_ADMIN", "net_raw": "CAP_NET_RAW", "CAP_KILL": "CAP_KILL"} {
		if got := capName(in); got != want {
			t.Errorf("capName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestErrorsMapToTheGRPCCodesTheKubeletReads(t *testing.T) {
	cases := []struct {
		err  error
		want codes.Code
	}{
		{notFoundf("container %s", "x"), codes.NotFound},
		{ErrPrivilegedRefused, codes.PermissionDenied},
		{ErrExists, codes.AlreadyExists},
		{ErrAmbiguous, codes.InvalidArgument},
		{ErrNotRunning, codes.FailedPrecondition},
		{errors.New("something else"), codes.Unknown},
	}
	for _, tc := range cases {
		if got := status.Code(toGRPC(tc.err)); got != tc.want {
			t.Errorf("%v: code %s, want %s", tc.err, got, tc.want)
		}
	}
	if toGRPC(nil) != nil {
		t.Error("nil is not nil")
	}
}

func TestStoreResolvesUniqueIDPrefixes(t *testing.T) {
	s := newStore()
	for _, id := range []string{"abc123", "abd456"} {
		s.addSandbox(&sandbox{ID: id, Config: &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: id}}})
	}
	if sb, err := s.sandbox("abc"); err != nil || sb.ID != "abc123" {
		t.Fatalf("unique prefix: %v, %v", sb, err)
	}
	if _, err := s.sandbox("ab"); !errors.Is(err, ErrAmbiguous) {
		t.Fatalf("ambiguous prefix: %v", err)
	}
	if _, err := s.sandbox("zz"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown ID: %v", err)
	}
	if err := s.reserve(sandboxName(&runtimeapi.PodSandboxMetadata{Name: "abc123"}), "other"); !errors.Is(err, ErrExists) {
		t.Fatalf("a taken name: %v", err)
	}
}

func TestRunAsGroupWithoutAUserIsRefused(t *testing.T) {
	s := &Service{}
	_, err := s.securityOpts(&runtimeapi.LinuxContainerSecurityContext{RunAsGroup: &runtimeapi.Int64Value{Value: 3000}})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("runAsGroup alone: %v, want ErrInvalid", err)
	}
	if _, err := s.securityOpts(nil); err != nil {
		t.Fatalf("no security context: %v", err)
	}
	if _, err := s.securityOpts(&runtimeapi.LinuxContainerSecurityContext{Privileged: true}); !errors.Is(err, ErrPrivilegedRefused) {
		t.Fatalf("privileged without --allow-privileged: %v", err)
	}
}
