package pki

import "time"

// Defaults used when no Option overrides them.
const (
	DefaultDir             = ".podline/pki"
	DefaultAdminKubeconfig = ".podline/kubeconfig"
	DefaultKubeconfigDir   = ".podline/kubeconfigs"
	DefaultExternalServer  = "https://127.0.0.1:6443"
	DefaultInternalServer  = "https://apiserver:6443"
	DefaultCAValidity      = 10 * 365 * 24 * time.Hour
	DefaultCertValidity    = 365 * 24 * time.Hour
)

// DefaultNodes are the node names podline's compose file runs a kubelet for.
func DefaultNodes() []string { return []string{"control-plane", "worker-1", "worker-2"} }

// DefaultEtcdMembers are the members of podline's etcd cluster.
func DefaultEtcdMembers() []string { return []string{"etcd-1", "etcd-2", "etcd-3"} }

// Options say where files go and which names the cluster has.
type Options struct {
	// Dir holds the CAs, certificates and keys.
	Dir string
	// AdminKubeconfig is the admin's kubeconfig for use from the host.
	AdminKubeconfig string
	// KubeconfigDir holds one kubeconfig per component, for use inside
	// compose.
	KubeconfigDir string
	// ExternalServer is the apiserver URL seen from the host.
	ExternalServer string
	// InternalServer is the apiserver URL seen from other containers.
	InternalServer string
	// Nodes get one kubelet client certificate and kubeconfig each.
	Nodes []string
	// EtcdMembers get one serving and one peer certificate each.
	EtcdMembers []string
	// CAValidity and CertValidity bound new certificates' lifetimes.
	CAValidity   time.Duration
	CertValidity time.Duration
	// Now is the clock; certificates are issued and checked against it.
	Now func() time.Time
}

// Option changes one field of Options.
type Option func(*Options)

// WithDir sets the directory for CAs, certificates and keys.
func WithDir(dir string) Option { return func(o *Options) { o.Dir = dir } }

// WithAdminKubeconfig sets the path of the admin kubeconfig used from the host.
func WithAdminKubeconfig(path string) Option {
	return func(o *Options) { o.AdminKubeconfig = path }
}

// WithKubeconfigDir sets the directory of the per-component kubeconfigs.
func WithKubeconfigDir(dir string) Option { return func(o *Options) { o.KubeconfigDir = dir } }

// WithExternalServer sets the apiserver URL written into the admin kubeconfig.
func WithExternalServer(url string) Option { return func(o *Options) { o.ExternalServer = url } }

// WithInternalServer sets the apiserver URL written into component kubeconfigs.
func WithInternalServer(url string) Option { return func(o *Options) { o.InternalServer = url } }

// WithNodes sets the node names that get kubelet credentials.
func WithNodes(nodes ...string) Option { return func(o *Options) { o.Nodes = nodes } }

// WithEtcdMembers sets the etcd member names.
func WithEtcdMembers(members ...string) Option {
	return func(o *Options) { o.EtcdMembers = members }
}

// WithValidity sets the lifetimes of new CAs and of new leaf certificates.
func WithValidity(ca, cert time.Duration) Option {
	return func(o *Options) { o.CAValidity, o.CertValidity = ca, cert }
}

// WithClock sets the clock used to issue and check certificates.
func WithClock(now func() time.Time) Option { return func(o *Options) { o.Now = now } }

func newOptions(opts []Option) Options {
	o := Options{
		Dir:             DefaultDir,
		AdminKubeconfig: DefaultAdminKubeconfig,
		KubeconfigDir:   DefaultKubeconfigDir,
		ExternalServer:  DefaultExternalServer,
		InternalServer:  DefaultInternalServer,
		Nodes:           DefaultNodes(),
		EtcdMembers:     DefaultEtcdMembers(),
		CAValidity:      DefaultCAValidity,
		CertValidity:    DefaultCertValidity,
		Now:             time.Now,
	}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}
