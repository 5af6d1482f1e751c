package sandboxfiles

import (
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestResolvConfFormatsTheSandboxDNSConfig(t *testing.T) {
	cases := []struct {
		name string
		dns  *runtimeapi.DNSConfig
		want string
	}{
		{name: "no config uses the node's", dns: nil, want: ""},
		{name: "an empty config uses the node's", dns: &runtimeapi.DNSConfig{}, want: ""},
		{name: "cluster DNS as the kubelet gives it",
			dns: &runtimeapi.DNSConfig{
				Servers:  []string{"10.96.0.10"},
				Searches: []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local"},
				Options:  []string{"ndots:5"},
			},
			want: "search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"},
		{name: "servers only", dns: &runtimeapi.DNSConfig{Servers: []string{"1.1.1.1", "8.8.8.8"}},
			want: "nameserver 1.1.1.1\nnameserver 8.8.8.8\n"},
		{name: "several options on one line", dns: &runtimeapi.DNSConfig{Options: []string{"ndots:2", "edns0"}},
			want: "options ndots:2 edns0\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(ResolvConf(tc.dns)); got != tc.want {
				t.Fatalf("resolv.conf %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHostsNamesThePodOnEachIP(t *testing.T) {
	got := string(Hosts("web-0", []string{"10.244.1.5"}))
	want := "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n10.244.1.5\tweb-0\n"
	if got != want {
		t.Fatalf("hosts %q, want %q", got, want)
	}
}
