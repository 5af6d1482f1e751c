package sandboxfiles

import (
	"bytes"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ResolvConf renders dns as a resolv.conf: a search line, a nameserver
// line per server, an options line; each only when it has entries. It
// returns nil when dns is nil or empty (use the node's resolv.conf).
func ResolvConf(dns *runtimeapi.DNSConfig) []byte {
	if dns == nil || (len(dns.Servers) == 0 && len(dns.Searches) == 0 && len(dns.Options) == 0) {
		return nil
	}
	var b bytes.Buffer
	if len(dns.Searches) > 0 {
		b.WriteString("search " + strings.Join(dns.Searches, " ") + "\n")
	}
	for _, s := range dns.Servers {
		b.WriteString("nameserver " + s + "\n")
	}
	if len(dns.Options) > 0 {
		b.WriteString("options " + strings.Join(dns.Options, " ") + "\n")
	}
	return b.Bytes()
}

// Hosts renders the sandbox's default /etc/hosts: localhost for IPv4 and
// IPv6, and the hostname on each of the pod's IPs. (The kubelet mounts a
// hosts file of its own into containers that are not on the host
// network; this one is for the others and for crictl's pods.)
func Hosts(hostname string, ips []string) []byte {
	var b bytes.Buffer
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\n")
	b.WriteString("fe00::0\tip6-mcastprefix\n")
	b.WriteString("fe00::1\tip6-allnodes\n")
	b.WriteString("fe00::2\tip6-allrouters\n")
	if hostname != "" {
		for _, ip := range ips {
			b.WriteString(ip + "\t" + hostname + "\n")
		}
	}
	return b.Bytes()
}

// Hostname renders /etc/hostname.
func Hostname(name string) []byte { return []byte(name + "\n") }
