package pki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestGenerateCertificatesChainToTheirCA(t *testing.T) {
	c := newCluster(t)
	server := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	client := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	tests := []struct {
		cert   string
		ca     Authority
		usages [][]x509.ExtKeyUsage
	}{
		{"apiserver", ClusterCA, [][]x509.ExtKeyUsage{server}},
		{"admin", ClusterCA, [][]x509.ExtKeyUsage{client}},
		{"controller-manager", ClusterCA, [][]x509.ExtKeyUsage{client}},
		{"scheduler", ClusterCA, [][]x509.ExtKeyUsage{client}},
		{"kubelet-control-plane", ClusterCA, [][]x509.ExtKeyUsage{client}},
		{"kubelet-worker-1", ClusterCA, [][]x509.ExtKeyUsage{client}},
		{"kubelet-worker-2", ClusterCA, [][]x509.ExtKeyUsage{client}},
		{"apiserver-etcd-client", EtcdCA, [][]x509.ExtKeyUsage{client}},
		{"etcd/etcd-1/server", EtcdCA, [][]x509.ExtKeyUsage{server, client}},
		{"etcd/etcd-2/peer", EtcdCA, [][]x509.ExtKeyUsage{server, client}},
		{"etcd/etcd-3/server", EtcdCA, [][]x509.ExtKeyUsage{server, client}},
	}
	for _, tt := range tests {
		t.Run(tt.cert, func(t *testing.T) {
			roots := x509.NewCertPool()
			roots.AddCert(c.cert(string(tt.ca)))
			for _, usage := range tt.usages {
				opts := x509.VerifyOptions{Roots: roots, KeyUsages: usage}
				if _, err := c.cert(tt.cert).Verify(opts); err != nil {
					t.Errorf("verify for %v against %s: %v", usage, tt.ca, err)
				}
			}
			if _, err := tls.LoadX509KeyPair(c.pkiPath(tt.cert+".crt"), c.pkiPath(tt.cert+".key")); err != nil {
				t.Errorf("certificate and key do not pair: %v", err)
			}
		})
	}
}

func TestGenerateCertificatesDoNotVerifyAgainstTheOtherCA(t *testing.T) {
	c := newCluster(t)
	tests := []struct{ cert, wrongCA string }{
		{"apiserver", string(EtcdCA)},
		{"admin", string(EtcdCA)},
		{"etcd/etcd-1/server", string(ClusterCA)},
		{"apiserver-etcd-client", string(ClusterCA)},
	}
	for _, tt := range tests {
		t.Run(tt.cert, func(t *testing.T) {
			roots := x509.NewCertPool()
			roots.AddCert(c.cert(tt.wrongCA))
			opts := x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}
			if _, err := c.cert(tt.cert).Verify(opts); err == nil {
				t.Errorf("%s verified against %s", tt.cert, tt.wrongCA)
			}
		})
	}
}

func TestGenerateSubjectsUseKubernetesNames(t *testing.T) {
	c := newCluster(t)
	tests := []struct {
		cert string
		cn   string
		orgs []string
	}{
		{"ca", "kubernetes", nil},
		{"etcd/ca", "etcd-ca", nil},
		{"apiserver", "kube-apiserver", nil},
		{"apiserver-etcd-client", "kube-apiserver-etcd-client", nil},
		{"admin", "kubernetes-admin", []string{"system:masters"}},
		{"controller-manager", "system:kube-controller-manager", nil},
		{"scheduler", "system:kube-scheduler", nil},
		{"kubelet-control-plane", "system:node:control-plane", []string{"system:nodes"}},
		{"kubelet-worker-1", "system:node:worker-1", []string{"system:nodes"}},
		{"kubelet-worker-2", "system:node:worker-2", []string{"system:nodes"}},
		{"kubelets/worker-1/kubelet", "system:node:worker-1", []string{"system:nodes"}},
		{"apiserver-kubelet-client", "kube-apiserver-kubelet-client", nil},
		{"etcd/etcd-2/server", "etcd-2", nil},
		{"etcd/etcd-2/peer", "etcd-2", nil},
	}
	for _, tt := range tests {
		t.Run(tt.cert, func(t *testing.T) {
			got := c.cert(tt.cert).Subject
			if got.CommonName != tt.cn {
				t.Errorf("CN = %q, want %q", got.CommonName, tt.cn)
			}
			if !slices.Equal(got.Organization, tt.orgs) {
				t.Errorf("O = %q, want %q", got.Organization, tt.orgs)
			}
		})
	}
}

func TestGenerateSANs(t *testing.T) {
	c := newCluster(t)
	tests := []struct {
		cert string
		dns  []string
		ips  []string
	}{
		{
			cert: "apiserver",
			dns: []string{"apiserver", "localhost", "kubernetes", "kubernetes.default",
				"kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
			ips: []string{"127.0.0.1", "10.96.0.1"},
		},
		{cert: "etcd/etcd-1/server", dns: []string{"etcd-1", "localhost"}, ips: []string{"127.0.0.1"}},
		{cert: "etcd/etcd-1/peer", dns: []string{"etcd-1", "localhost"}, ips: []string{"127.0.0.1"}},
		{cert: "etcd/etcd-3/server", dns: []string{"etcd-3", "localhost"}, ips: []string{"127.0.0.1"}},
		{cert: "admin"},
		{cert: "kubelet-worker-1"},
		{cert: "apiserver-kubelet-client"},
		{cert: "kubelets/control-plane/kubelet", dns: []string{"control-plane", "localhost"}, ips: []string{"127.0.0.1"}},
		{cert: "kubelets/worker-2/kubelet", dns: []string{"worker-2", "localhost"}, ips: []string{"127.0.0.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.cert, func(t *testing.T) {
			cert := c.cert(tt.cert)
			if !sameSet(cert.DNSNames, tt.dns) {
				t.Errorf("DNS SANs = %q, want %q", cert.DNSNames, tt.dns)
			}
			if !sameSet(ipStrings(cert.IPAddresses), tt.ips) {
				t.Errorf("IP SANs = %q, want %q", cert.IPAddresses, tt.ips)
			}
			for _, host := range append(tt.dns, tt.ips...) {
				if err := cert.VerifyHostname(host); err != nil {
					t.Errorf("VerifyHostname(%q): %v", host, err)
				}
			}
		})
	}
}

func TestGenerateNodesFollowTheNodeList(t *testing.T) {
	c := newCluster(t, WithNodes("n1", "n2"))
	for _, name := range []string{"kubelet-n1.crt", "kubelet-n2.crt", "kubelet-n1.key"} {
		if _, err := os.Stat(c.pkiPath(name)); err != nil {
			t.Errorf("missing %s: %v", name, err)
		}
	}
	if _, err := os.Stat(c.pkiPath("kubelet-worker-1.crt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("kubelet-worker-1.crt exists for a node not in the list (err %v)", err)
	}
	if got := c.cert("kubelet-n2").Subject.CommonName; got != "system:node:n2" {
		t.Errorf("CN = %q", got)
	}
}

func TestGenerateTwiceChangesNothing(t *testing.T) {
	c := newCluster(t)
	before := c.snapshot()
	report, err := c.generate()
	if err != nil {
		t.Fatal(err)
	}
	if report.Changed() {
		t.Errorf("second run changed files: %v", report)
	}
	after := c.snapshot()
	if len(after) != len(before) {
		t.Fatalf("second run left %d files, want %d", len(after), len(before))
	}
	for path, content := range before {
		if after[path] != content {
			t.Errorf("%s changed on the second run", path)
		}
	}
}

func TestGenerateReissuesWhatIsStale(t *testing.T) {
	tests := []struct {
		name   string
		damage func(c cluster)                         // what happens between runs
		opts   func(c cluster) []Option                // options of the second run
		check  func(t *testing.T, c cluster, r Report) // extra expectations
	}{
		{
			name:   "missing certificate is issued for the existing key",
			damage: func(c cluster) { os.Remove(c.pkiPath("scheduler.crt")) },
			check: func(t *testing.T, c cluster, r Report) {
				wantActions(t, r, map[string]Action{
					c.pkiPath("scheduler.key"): Kept,
					c.pkiPath("scheduler.crt"): Created,
				})
			},
		},
		{
			name: "certificate signed by another CA is replaced",
			damage: func(c cluster) {
				other := newCluster(c.t)
				copyFile(c.t, other.pkiPath("admin.crt"), c.pkiPath("admin.crt"))
				copyFile(c.t, other.pkiPath("admin.key"), c.pkiPath("admin.key"))
			},
			check: func(t *testing.T, c cluster, r Report) {
				wantActions(t, r, map[string]Action{
					c.pkiPath("admin.crt"):              Replaced,
					filepath.Join(c.root, "kubeconfig"): Replaced,
					c.pkiPath("ca.crt"):                 Kept,
					c.pkiPath("controller-manager.crt"): Kept,
				})
			},
		},
		{
			name: "expired certificates are renewed, CA kept",
			opts: func(c cluster) []Option {
				return []Option{WithClock(fixedClock(time.Now().Add(DefaultCertValidity + time.Hour)))}
			},
			check: func(t *testing.T, c cluster, r Report) {
				wantActions(t, r, map[string]Action{
					c.pkiPath("ca.crt"):               Kept,
					c.pkiPath("apiserver.key"):        Kept,
					c.pkiPath("apiserver.crt"):        Replaced,
					c.pkiPath("etcd/etcd-2/peer.crt"): Replaced,
				})
			},
		},
		{
			name: "changed member list adds only the new member",
			opts: func(c cluster) []Option {
				return []Option{WithEtcdMembers("etcd-1", "etcd-2", "etcd-3", "etcd-4")}
			},
			check: func(t *testing.T, c cluster, r Report) {
				wantActions(t, r, map[string]Action{
					c.pkiPath("etcd/etcd-4/server.crt"): Created,
					c.pkiPath("etcd/etcd-4/ca.crt"):     Created,
					c.pkiPath("etcd/etcd-1/server.crt"): Kept,
				})
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t)
			if tt.damage != nil {
				tt.damage(c)
			}
			var opts []Option
			if tt.opts != nil {
				opts = tt.opts(c)
			}
			report, err := c.generate(opts...)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c, report)
		})
	}
}

func TestGenerateNeverReplacesACA(t *testing.T) {
	tests := []struct {
		name   string
		damage func(c cluster)
		opts   []Option
		want   error
	}{
		{
			name:   "cluster CA key removed",
			damage: func(c cluster) { os.Remove(c.pkiPath("ca.key")) },
			want:   ErrCAKeyMissing,
		},
		{
			name:   "etcd CA key removed",
			damage: func(c cluster) { os.Remove(c.pkiPath("etcd/ca.key")) },
			want:   ErrCAKeyMissing,
		},
		{
			name:   "CA key swapped for another",
			damage: func(c cluster) { copyFile(c.t, c.pkiPath("admin.key"), c.pkiPath("ca.key")) },
			want:   ErrCAInvalid,
		},
		{
			name:   "CA expired",
			damage: func(c cluster) {},
			opts:   []Option{WithClock(fixedClock(time.Now().Add(DefaultCAValidity + time.Hour)))},
			want:   ErrCAInvalid,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t)
			tt.damage(c)
			before := c.read(c.pkiPath("ca.crt"))
			if _, err := c.generate(tt.opts...); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if string(c.read(c.pkiPath("ca.crt"))) != string(before) {
				t.Error("ca.crt was replaced")
			}
		})
	}
}

func TestGenerateRejectsNamesThatAreNotDNSLabels(t *testing.T) {
	tests := []Option{
		WithNodes("worker_1"),
		WithNodes("../escape"),
		WithEtcdMembers("Etcd-1"),
		WithEtcdMembers(""),
	}
	for i, opt := range tests {
		dir := t.TempDir()
		if _, err := Generate(WithDir(dir), opt); !errors.Is(err, ErrInvalidName) {
			t.Errorf("case %d: err = %v, want ErrInvalidName", i, err)
		}
	}
}

func TestServiceAccountPublicKeyMatchesPrivateKey(t *testing.T) {
	c := newCluster(t)
	key, err := decodeKey(c.read(c.pkiPath(ServiceAccountKey)))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := decodePublicKey(c.read(c.pkiPath(ServiceAccountPub)))
	if err != nil {
		t.Fatal(err)
	}
	if !key.PublicKey.Equal(pub) {
		t.Error("sa.pub is not the public half of sa.key")
	}
}

func wantActions(t *testing.T, r Report, want map[string]Action) {
	t.Helper()
	got := map[string]Action{}
	for _, e := range r {
		got[e.Path] = e.Action
	}
	for path, action := range want {
		if got[path] != action {
			t.Errorf("%s: %q, want %q", path, got[path], action)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
