package poddns

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// podBuilder builds pods: makePod("web").policy("None").obj().
type podBuilder struct{ pod *corev1.Pod }

func makePod(name string) *podBuilder {
	return &podBuilder{&corev1.Pod{Metadata: &metav1.ObjectMeta{Name: name, Namespace: "shop"}, Spec: &corev1.PodSpec{}}}
}

func (b *podBuilder) policy(p string) *podBuilder    { b.pod.Spec.DnsPolicy = p; return b }
func (b *podBuilder) hostNetwork() *podBuilder       { b.pod.Spec.HostNetwork = true; return b }
func (b *podBuilder) hostname(h string) *podBuilder  { b.pod.Spec.Hostname = h; return b }
func (b *podBuilder) subdomain(s string) *podBuilder { b.pod.Spec.Subdomain = s; return b }
func (b *podBuilder) fqdn() *podBuilder              { b.pod.Spec.SetHostnameAsFqdn = proto.Bool(true); return b }
func (b *podBuilder) alias(ip string, names ...string) *podBuilder {
	b.pod.Spec.HostAliases = append(b.pod.Spec.HostAliases, &corev1.HostAlias{Ip: ip, Hostnames: names})
	return b
}

// dnsConfig sets spec.dnsConfig; options are "name" or "name:value".
func (b *podBuilder) dnsConfig(servers, searches, options []string) *podBuilder {
	dc := &corev1.PodDNSConfig{Nameservers: servers, Searches: searches}
	for _, o := range options {
		name, val, ok := strings.Cut(o, ":")
		opt := &corev1.PodDNSConfigOption{Name: name}
		if ok {
			opt.Value = proto.String(val)
		}
		dc.Options = append(dc.Options, opt)
	}
	b.pod.Spec.DnsConfig = dc
	return b
}
func (b *podBuilder) obj() *corev1.Pod { return b.pod }

var (
	cluster = Cluster{Servers: []string{"10.96.0.10"}, Domain: "cluster.local"}
	node    = ParseResolvConf([]byte("# the node's\nnameserver 192.168.1.1\nnameserver 192.168.1.2 ; second\nsearch corp.example. lab.example\noptions timeout:2 rotate\n"))
)

func TestParseResolvConfReadsServersSearchesAndOptions(t *testing.T) {
	want := Config{Servers: []string{"192.168.1.1", "192.168.1.2"}, Searches: []string{"corp.example", "lab.example"}, Options: []string{"timeout:2", "rotate"}}
	if fmt.Sprint(node) != fmt.Sprint(want) {
		t.Fatalf("got %+v, want %+v", node, want)
	}
}

func TestForPodFollowsTheDNSPolicy(t *testing.T) {
	clusterSearch := []string{"shop.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example", "lab.example"}
	many := make([]string, 40)
	for i := range many {
		many[i] = fmt.Sprintf("d%d.example", i)
	}
	tests := []struct {
		name    string
		pod     *corev1.Pod
		cluster Cluster
		want    Config
		wantErr error
	}{
		{name: "ClusterFirst is the default: cluster servers, the namespace's search path before the node's, ndots:5",
			pod: makePod("a").obj(), cluster: cluster,
			want: Config{Servers: []string{"10.96.0.10"}, Searches: clusterSearch, Options: []string{"ndots:5"}}},
		{name: "ClusterFirst in the host's network is Default",
			pod: makePod("a").policy(PolicyClusterFirst).hostNetwork().obj(), cluster: cluster, want: node},
		{name: "ClusterFirstWithHostNet in the host's network is cluster DNS",
			pod: makePod("a").policy(PolicyClusterFirstWithHostNet).hostNetwork().obj(), cluster: cluster,
			want: Config{Servers: []string{"10.96.0.10"}, Searches: clusterSearch, Options: []string{"ndots:5"}}},
		{name: "Default is the node's resolv.conf",
			pod: makePod("a").policy(PolicyDefault).obj(), cluster: cluster, want: node},
		{name: "None is only spec.dnsConfig",
			pod:     makePod("a").policy(PolicyNone).dnsConfig([]string{"1.1.1.1"}, []string{"x.example"}, []string{"ndots:2", "edns0"}).obj(),
			cluster: cluster, want: Config{Servers: []string{"1.1.1.1"}, Searches: []string{"x.example"}, Options: []string{"ndots:2", "edns0"}}},
		{name: "None without dnsConfig is empty", pod: makePod("a").policy(PolicyNone).obj(), cluster: cluster},
		{name: "dnsConfig is merged: servers and searches appended without duplicates, an option replaces the same name",
			pod:     makePod("a").dnsConfig([]string{"10.96.0.10", "8.8.8.8"}, []string{"cluster.local", "extra.example"}, []string{"ndots:1", "edns0"}).obj(),
			cluster: cluster,
			want: Config{Servers: []string{"10.96.0.10", "8.8.8.8"}, Searches: append(slices.Clone(clusterSearch), "extra.example"),
				Options: []string{"ndots:1", "edns0"}}},
		{name: "at most three nameservers",
			pod:     makePod("a").policy(PolicyNone).dnsConfig([]string{"1.0.0.1", "1.0.0.2", "1.0.0.3", "1.0.0.4"}, nil, nil).obj(),
			cluster: cluster, want: Config{Servers: []string{"1.0.0.1", "1.0.0.2", "1.0.0.3"}}},
		{name: "at most 32 search domains",
			pod: makePod("a").policy(PolicyNone).dnsConfig(nil, many, nil).obj(), cluster: cluster, want: Config{Searches: many[:32]}},
		{name: "ClusterFirst without cluster DNS falls back to the node's",
			pod: makePod("a").obj(), want: node, wantErr: ErrNoClusterDNS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ForPod(tt.pod, tt.cluster, node)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestForPodDoesNotChangeTheNodesConfig(t *testing.T) {
	host := Config{Servers: []string{"192.168.1.1"}, Searches: []string{"a.example"}}
	_, _ = ForPod(makePod("a").policy(PolicyDefault).dnsConfig([]string{"8.8.8.8"}, []string{"b.example"}, nil).obj(), cluster, host)
	if len(host.Servers) != 1 || len(host.Searches) != 1 {
		t.Fatalf("host config changed: %+v", host)
	}
}

func TestHostnameAndSandboxHostname(t *testing.T) {
	long := strings.Repeat("a", 62) + "-b"
	tests := []struct {
		name               string
		pod                *corev1.Pod
		host, dom, sandbox string
	}{
		{name: "the pod's name", pod: makePod("web-1").obj(), host: "web-1", sandbox: "web-1"},
		{name: "spec.hostname over the name", pod: makePod("web-1").hostname("db").obj(), host: "db", sandbox: "db"},
		{name: "a subdomain gives the domain", pod: makePod("web-1").hostname("db").subdomain("dbs").obj(),
			host: "db", dom: "dbs.shop.svc.cluster.local", sandbox: "db"},
		{name: "setHostnameAsFQDN puts the FQDN in the sandbox", pod: makePod("web-1").hostname("db").subdomain("dbs").fqdn().obj(),
			host: "db", dom: "dbs.shop.svc.cluster.local", sandbox: "db.dbs.shop.svc.cluster.local"},
		{name: "63 characters at most, no trailing dash", pod: makePod(long).obj(), host: strings.Repeat("a", 62), sandbox: strings.Repeat("a", 62)},
		{name: "the host's network keeps the node's hostname", pod: makePod("web-1").hostNetwork().obj(), host: "web-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, d := Hostname(tt.pod, "cluster.local")
			if h != tt.host || d != tt.dom {
				t.Fatalf("Hostname = %q, %q; want %q, %q", h, d, tt.host, tt.dom)
			}
			if s := SandboxHostname(tt.pod, "cluster.local"); s != tt.sandbox {
				t.Fatalf("SandboxHostname = %q, want %q", s, tt.sandbox)
			}
		})
	}
}

func TestHostsFile(t *testing.T) {
	const head = "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" +
		"fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n"
	tests := []struct {
		name string
		pod  *corev1.Pod
		ips  []string
		want string
	}{
		{name: "the pod's IP under its hostname", pod: makePod("web-1").obj(), ips: []string{"10.244.1.5"}, want: head + "10.244.1.5\tweb-1\n"},
		{name: "with a subdomain the FQDN first", pod: makePod("web-1").hostname("db").subdomain("dbs").obj(), ips: []string{"10.244.1.5"},
			want: head + "10.244.1.5\tdb.dbs.shop.svc.cluster.local\tdb\n"},
		{name: "hostAliases after one header", pod: makePod("web-1").alias("1.2.3.4", "foo", "bar").alias("5.6.7.8", "baz").obj(), ips: []string{"10.244.1.5"},
			want: head + "10.244.1.5\tweb-1\n\n# Entries added by HostAliases.\n1.2.3.4\tfoo\tbar\n5.6.7.8\tbaz\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(HostsFile(tt.pod, "cluster.local", tt.ips)); got != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
