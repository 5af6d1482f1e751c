package poddns

import (
	"bufio"
	"bytes"
	"strings"

	corev1 "podline.dev/proto/core/v1"
)

// Limits Kubernetes puts on a resolver configuration.
const (
	MaxNameservers    = 3
	MaxSearchPaths    = 32
	MaxSearchListChar = 2048
)

// DNS policies of a pod spec.
const (
	PolicyClusterFirst            = "ClusterFirst"
	PolicyClusterFirstWithHostNet = "ClusterFirstWithHostNet"
	PolicyDefault                 = "Default"
	PolicyNone                    = "None"
)

// Cluster is the cluster's DNS as the kubelet is told it (--cluster-dns,
// --cluster-domain).
type Cluster struct {
	Servers []string
	Domain  string
}

// Config is a resolver configuration, as CRI's DNSConfig carries it.
type Config struct {
	Servers  []string
	Searches []string
	Options  []string
}

// ParseResolvConf reads the nameserver, search and options lines of a
// resolv.conf.
func ParseResolvConf(data []byte) Config {
	var c Config
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexAny(line, "#;"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "nameserver":
			if len(f) > 1 {
				c.Servers = append(c.Servers, f[1])
			}
		case "search":
			// The last search line wins, as in the resolver.
			c.Searches = nil
			for _, s := range f[1:] {
				if s != "." {
					c.Searches = append(c.Searches, strings.TrimSuffix(s, "."))
				}
			}
		case "options":
			c.Options = append(c.Options, f[1:]...)
		}
	}
	return c
}

// policy is the effective policy: ClusterFirst in the host's network
// namespace is Default, as in Kubernetes.
func policy(pod *corev1.Pod) string {
	p := pod.GetSpec().GetDnsPolicy()
	switch p {
	case "", PolicyClusterFirst:
		if pod.GetSpec().GetHostNetwork() {
			return PolicyDefault
		}
		return PolicyClusterFirst
	case PolicyClusterFirstWithHostNet:
		return PolicyClusterFirst
	}
	return p
}

// ForPod is the resolver configuration of a pod's sandbox: by dnsPolicy
// (ClusterFirst: the cluster's servers, the namespace's search path
// before the node's, ndots:5; Default: the node's resolv.conf; None:
// nothing), then spec.dnsConfig merged in, then Kubernetes' limits. err
// is ErrNoClusterDNS when cluster DNS was asked for but none is known;
// the configuration is the node's then.
func ForPod(pod *corev1.Pod, cluster Cluster, host Config) (Config, error) {
	var c Config
	var err error
	switch policy(pod) {
	case PolicyClusterFirst:
		if len(cluster.Servers) == 0 {
			err = ErrNoClusterDNS
			c = clone(host)
			break
		}
		ns := pod.GetMetadata().GetNamespace()
		c.Servers = append([]string(nil), cluster.Servers...)
		if d := cluster.Domain; d != "" {
			c.Searches = []string{ns + ".svc." + d, "svc." + d, d}
		}
		c.Searches = append(c.Searches, host.Searches...)
		c.Options = []string{"ndots:5"}
	case PolicyDefault:
		c = clone(host)
	case PolicyNone:
	}
	if dc := pod.GetSpec().GetDnsConfig(); dc != nil {
		c.Servers = unique(append(c.Servers, dc.GetNameservers()...))
		c.Searches = unique(append(c.Searches, dc.GetSearches()...))
		var opts []string
		for _, o := range dc.GetOptions() {
			s := o.GetName()
			if o.Value != nil {
				s += ":" + o.GetValue()
			}
			opts = append(opts, s)
		}
		c.Options = mergeOptions(c.Options, opts)
	}
	c.Servers = c.Servers[:min(len(c.Servers), MaxNameservers)]
	c.Searches = fitSearches(c.Searches)
	return c, err
}

func clone(c Config) Config {
	return Config{
		Servers:  append([]string(nil), c.Servers...),
		Searches: append([]string(nil), c.Searches...),
		Options:  append([]string(nil), c.Options...),
	}
}

func unique(in []string) []string {
	seen := map[string]bool{}
	out := in[:0:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// mergeOptions: an option of the pod replaces the one of the same name.
func mergeOptions(base, pod []string) []string {
	var order []string
	val := map[string]string{}
	for _, o := range append(append([]string(nil), base...), pod...) {
		name, _, _ := strings.Cut(o, ":")
		if _, ok := val[name]; !ok {
			order = append(order, name)
		}
		val[name] = o
	}
	out := make([]string, 0, len(order))
	for _, n := range order {
		out = append(out, val[n])
	}
	return out
}

// fitSearches keeps the search path within Kubernetes' limits: at most
// 32 domains and 2048 characters.
func fitSearches(s []string) []string {
	s = s[:min(len(s), MaxSearchPaths)]
	for len(s) > 0 && len(strings.Join(s, " ")) > MaxSearchListChar {
		s = s[:len(s)-1]
	}
	return s
}
