package pki

import (
	"fmt"
	"net"
	"path/filepath"
	"regexp"
)

// Authority names one of the two CAs by its file base under Options.Dir.
type Authority string

const (
	// ClusterCA signs the apiserver's serving certificate and every
	// client certificate presented to the apiserver.
	ClusterCA Authority = "ca"
	// EtcdCA signs the etcd members' certificates and the apiserver's
	// etcd client certificate. Only the apiserver talks to etcd.
	EtcdCA Authority = "etcd/ca"
)

// commonName is the subject each CA is created with (kubeadm's names).
func (a Authority) commonName() string {
	if a == EtcdCA {
		return "etcd-ca"
	}
	return "kubernetes"
}

// Usage is a set of extended key usages.
type Usage uint8

const (
	// ServerAuth lets a certificate serve TLS.
	ServerAuth Usage = 1 << iota
	// ClientAuth lets a certificate authenticate a TLS client.
	ClientAuth
)

// CertSpec describes one leaf certificate.
type CertSpec struct {
	// Name is the file base under Options.Dir: Name+".crt", Name+".key".
	Name         string
	Signer       Authority
	CommonName   string
	Organization []string
	DNSNames     []string
	IPAddresses  []net.IP
	Usage        Usage
}

// KubeconfigSpec describes one kubeconfig file.
type KubeconfigSpec struct {
	Path   string // where the file goes
	Server string // apiserver URL
	Cert   string // CertSpec.Name of the embedded client certificate
	User   string // user name inside the file
}

// CopySpec is a file copied verbatim, so that a directory is complete on
// its own when mounted into a container.
type CopySpec struct {
	From, To string // file names under Options.Dir
}

// Plan is every file the cluster's identity consists of.
type Plan struct {
	CAs         []Authority
	Certs       []CertSpec
	Copies      []CopySpec
	Kubeconfigs []KubeconfigSpec
}

// File names of the ServiceAccount token signing key pair (kubeadm's).
const (
	serviceAccount    = "sa"
	ServiceAccountKey = serviceAccount + ".key"
	ServiceAccountPub = serviceAccount + ".pub"
)

// User names and groups Kubernetes' authorizers give meaning to.
const (
	AdminUser             = "kubernetes-admin"
	MastersGroup          = "system:masters"
	ControllerManagerUser = "system:kube-controller-manager"
	SchedulerUser         = "system:kube-scheduler"
	NodeUserPrefix        = "system:node:"
	NodesGroup            = "system:nodes"
	// APIServerKubeletClientUser is the apiserver's identity towards the
	// kubelets (--kubelet-client-certificate). As in kubeadm since 1.37, the
	// certificate carries no group: RBAC grants this user
	// system:kubelet-api-admin, and nothing more.
	APIServerKubeletClientUser = "kube-apiserver-kubelet-client"
)

// APIServerDNSNames are the names the apiserver is reached by: its compose
// service name, loopback, and the in-cluster names of the kubernetes
// Service.
var APIServerDNSNames = []string{
	"apiserver",
	"localhost",
	"kubernetes",
	"kubernetes.default",
	"kubernetes.default.svc",
	"kubernetes.default.svc.cluster.local",
}

// APIServerIPs are the loopback address and the kubernetes Service's
// cluster IP, the first address of the 10.96.0.0/12 service range.
var APIServerIPs = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")}

// validName is a DNS label: usable as a file name, a SAN and a user name.
var validName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// WatchcacheDir is the directory, under Options.Dir, of the watchcache
// replicas' pairs: serving.{crt,key} for their gRPC and metrics ports, by
// WatchcacheDNSNames, and client.{crt,key}, their identity towards the
// apiserver: WatchcacheUser in system:masters, since they list and watch
// every resource and ask SubjectAccessReviews about their own clients.
const WatchcacheDir = "watchcache"

// WatchcacheUser is the watchcache replicas' user name.
const WatchcacheUser = "system:watchcache"

// WatchcacheDNSNames are the names compose reaches the replicas by: the
// alias both answer to and each one's own.
var WatchcacheDNSNames = []string{"watchcache", "watchcache-1", "watchcache-2", "localhost"}

// NATSDir is the directory, under Options.Dir, that the NATS server is
// given as a whole: server.{crt,key}, its serving pair by NATSDNSNames, and
// ca.crt, the cluster CA, which verifies its clients' certificates. Its
// clients are the apiserver, which publishes the watch events
// (APIServerNATSClientUser), and the watchcache replicas, which read them
// with their client pair (WatchcacheUser).
const NATSDir = "nats"

// NATSDNSNames are the names NATS is reached by: its compose service name
// and loopback.
var NATSDNSNames = []string{"nats", "localhost"}

// APIServerNATSClientUser is the apiserver's identity towards NATS. It is
// signed by the cluster CA like every client certificate, so the apiserver
// would also take it: RBAC grants this user nothing.
const APIServerNATSClientUser = "kube-apiserver-nats-client"

// SchedulerServingDir is the directory, under Options.Dir, of the
// schedulers' serving pair, serving.{crt,key}, for their secure port
// (/metrics and the health paths on 10259), by SchedulerDNSNames.
const SchedulerServingDir = "scheduler"

// SchedulerDNSNames are the names compose reaches the schedulers by, and
// loopback for their healthchecks.
var SchedulerDNSNames = []string{"scheduler-1", "scheduler-2", "localhost"}

// RegistryDir is the directory, under Options.Dir, of the in-cluster image
// registry's serving pair, server.{crt,key}, by RegistryDNSNames. Nodes
// verify it with the cluster CA they already hold (hosts.toml).
const RegistryDir = "registry"

// RegistryDNSNames are the names the registry is reached by: the name
// images carry (registry.podline:5000/...), its compose service name, and
// loopback, where the host pushes.
var RegistryDNSNames = []string{"registry.podline", "registry", "localhost"}

// JaegerDir is the directory, under Options.Dir, of Jaeger's serving pair,
// server.{crt,key}, by JaegerDNSNames, for its OTLP receiver and its query
// API: every component exports spans over TLS and verifies them with the
// cluster CA.
const JaegerDir = "jaeger"

// JaegerDNSNames are the names Jaeger is reached by: its compose service
// name and loopback, where its query port is published.
var JaegerDNSNames = []string{"jaeger", "localhost"}

// EtcdOTLPCA is the file, in each etcd member's directory, holding the
// cluster CA: it verifies Jaeger, to which the member's spans go over TLS.
// The member's own ca.crt is the etcd CA, which signs nothing of Jaeger's.
const EtcdOTLPCA = "otlp-ca.crt"

// EtcdMemberDir is the directory, under Options.Dir, holding one member's
// files with kubeadm's names: ca.crt, server.{crt,key}, peer.{crt,key}.
func EtcdMemberDir(member string) string { return filepath.Join("etcd", member) }

// KubeletCertName is the file base of a node's kubelet client certificate.
func KubeletCertName(node string) string { return "kubelet-" + node }

// KubeletServingDir is the directory, under Options.Dir, holding what one
// node's kubelet serves with: kubelet.{crt,key} (its serving certificate,
// kubelet's file names) and ca.crt (the cluster CA, which verifies the
// clients of its server), so it can be mounted into the node as a whole.
func KubeletServingDir(node string) string { return filepath.Join("kubelets", node) }

// KubeletServingCertName is the file base of a node's kubelet serving
// certificate.
func KubeletServingCertName(node string) string {
	return filepath.Join(KubeletServingDir(node), "kubelet")
}

// KubeletDNSNames are the names a node's kubelet server is reached by: the
// node's name, which is its Hostname address and, in compose, the name its
// container resolves by (the apiserver dials Hostname first), and localhost
// for callers inside the node. The node's InternalIP is left out: compose
// assigns it at start.
func KubeletDNSNames(node string) []string { return []string{node, "localhost"} }

// NewPlan returns every file the options call for. It does no I/O.
func NewPlan(o Options) (Plan, error) {
	for _, name := range append(append([]string{}, o.Nodes...), o.EtcdMembers...) {
		if !validName.MatchString(name) {
			return Plan{}, fmt.Errorf("%w: %q is not a DNS label", ErrInvalidName, name)
		}
	}
	p := Plan{CAs: []Authority{ClusterCA, EtcdCA}}
	for _, m := range o.EtcdMembers {
		p.Certs = append(p.Certs, etcdMemberCerts(m)...)
		p.Copies = append(p.Copies,
			CopySpec{From: string(EtcdCA) + ".crt", To: filepath.Join(EtcdMemberDir(m), "ca.crt")},
			CopySpec{From: string(ClusterCA) + ".crt", To: filepath.Join(EtcdMemberDir(m), EtcdOTLPCA)},
		)
	}
	p.Certs = append(p.Certs,
		CertSpec{
			Name: "apiserver", Signer: ClusterCA, CommonName: "kube-apiserver",
			DNSNames: APIServerDNSNames, IPAddresses: APIServerIPs, Usage: ServerAuth,
		},
		CertSpec{
			Name: "apiserver-etcd-client", Signer: EtcdCA,
			CommonName: "kube-apiserver-etcd-client", Usage: ClientAuth,
		},
		clientCert("admin", AdminUser, MastersGroup),
		clientCert("controller-manager", ControllerManagerUser),
		clientCert("scheduler", SchedulerUser),
		servingCert(filepath.Join(SchedulerServingDir, "serving"), "kube-scheduler", SchedulerDNSNames),
		clientCert("apiserver-kubelet-client", APIServerKubeletClientUser),
		servingCert(filepath.Join(WatchcacheDir, "serving"), "watchcache", WatchcacheDNSNames),
		clientCert(filepath.Join(WatchcacheDir, "client"), WatchcacheUser, MastersGroup),
		servingCert(filepath.Join(NATSDir, "server"), "nats", NATSDNSNames),
		clientCert("apiserver-nats-client", APIServerNATSClientUser),
		servingCert(filepath.Join(RegistryDir, "server"), "registry", RegistryDNSNames),
		servingCert(filepath.Join(JaegerDir, "server"), "jaeger", JaegerDNSNames),
	)
	p.Copies = append(p.Copies, CopySpec{
		From: string(ClusterCA) + ".crt",
		To:   filepath.Join(NATSDir, "ca.crt"),
	})
	p.Kubeconfigs = []KubeconfigSpec{
		{Path: o.AdminKubeconfig, Server: o.ExternalServer, Cert: "admin", User: AdminUser},
		component(o, "admin", AdminUser),
		component(o, "controller-manager", ControllerManagerUser),
		component(o, "scheduler", SchedulerUser),
	}
	for _, n := range o.Nodes {
		name := KubeletCertName(n)
		p.Certs = append(p.Certs, clientCert(name, NodeUserPrefix+n, NodesGroup))
		p.Kubeconfigs = append(p.Kubeconfigs, component(o, name, NodeUserPrefix+n))
		p.Certs = append(p.Certs, CertSpec{
			Name: KubeletServingCertName(n), Signer: ClusterCA,
			CommonName: NodeUserPrefix + n, Organization: []string{NodesGroup},
			DNSNames: KubeletDNSNames(n), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
			Usage: ServerAuth,
		})
		p.Copies = append(p.Copies, CopySpec{
			From: string(ClusterCA) + ".crt",
			To:   filepath.Join(KubeletServingDir(n), "ca.crt"),
		})
	}
	return p, nil
}

// etcdMemberCerts are a member's serving and peer certificates. Both carry
// client usage as well: peers dial each other with the peer certificate, and
// etcdctl inside a member authenticates with the serving one.
func etcdMemberCerts(member string) []CertSpec {
	spec := func(file string) CertSpec {
		return CertSpec{
			Name:        filepath.Join(EtcdMemberDir(member), file),
			Signer:      EtcdCA,
			CommonName:  member,
			DNSNames:    []string{member, "localhost"},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
			Usage:       ServerAuth | ClientAuth,
		}
	}
	return []CertSpec{spec("server"), spec("peer")}
}

// servingCert is a cluster-CA serving certificate for names and loopback's
// address.
func servingCert(name, commonName string, names []string) CertSpec {
	return CertSpec{
		Name: name, Signer: ClusterCA, CommonName: commonName,
		DNSNames: names, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, Usage: ServerAuth,
	}
}

func clientCert(name, user string, groups ...string) CertSpec {
	return CertSpec{
		Name: name, Signer: ClusterCA, CommonName: user,
		Organization: groups, Usage: ClientAuth,
	}
}

// component is the kubeconfig a component uses inside compose, named like
// kubeadm's (controller-manager.conf, scheduler.conf, ...).
func component(o Options, cert, user string) KubeconfigSpec {
	return KubeconfigSpec{
		Path:   filepath.Join(o.KubeconfigDir, cert+".conf"),
		Server: o.InternalServer,
		Cert:   cert,
		User:   user,
	}
}
