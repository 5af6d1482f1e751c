package test

import (
	"context"
	"crypto/tls"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"podline.dev/pkg/client"
	"podline.dev/pkg/pki"
	"podline.dev/pkg/watch"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/watchcache/internal/replica"
)

// natsPKI is a `make certs` directory of its own cluster CA.
type natsPKI string

func newNATSPKI(t *testing.T) natsPKI {
	t.Helper()
	dir := t.TempDir()
	if _, err := pki.Generate(pki.WithDir(dir), pki.WithKubeconfigDir(filepath.Join(dir, "kubeconfigs")),
		pki.WithAdminKubeconfig(filepath.Join(dir, "kubeconfig")), pki.WithNodes("node-1"), pki.WithEtcdMembers("etcd-1")); err != nil {
		t.Fatal(err)
	}
	return natsPKI(dir)
}

func (p natsPKI) path(name string) string { return filepath.Join(string(p), name) }

// client is the TLS configuration of a client presenting pair (a file
// base, none when empty) and verifying NATS by the CA of NATS' directory.
func (p natsPKI) client(t *testing.T, pair string) *tls.Config {
	t.Helper()
	var crt, key string
	if pair != "" {
		crt, key = p.path(pair+".crt"), p.path(pair+".key")
	}
	cfg, err := pki.ClientTLS(p.path(filepath.Join(pki.NATSDir, "ca.crt")), crt, key)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// startTLSNATS runs nats-server with the image's configuration
// (services/watchcache/nats.conf), its certificate paths pointed at p's
// NATS directory.
func startTLSNATS(t *testing.T, p natsPKI) *natsServer {
	t.Helper()
	conf, err := os.ReadFile(filepath.Join("..", "nats.conf"))
	if err != nil {
		t.Fatal(err)
	}
	const mounted = `"/etc/nats/pki/`
	if c := strings.Count(string(conf), mounted); c != 3 {
		t.Fatalf("nats.conf has %s %d times, want 3 (certificate, key, CA)", mounted, c)
	}
	file := filepath.Join(t.TempDir(), "nats.conf")
	conf = []byte(strings.ReplaceAll(string(conf), mounted, `"`+p.path(pki.NATSDir)+"/"))
	if err := os.WriteFile(file, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	return startNATSWith(t, file)
}

// connect is one connection attempt, without retries.
func connect(url string, opts ...nats.Option) error {
	nc, err := nats.Connect(url, append(opts, nats.Timeout(5*time.Second))...)
	if err != nil {
		return err
	}
	defer nc.Close()
	return nc.Flush()
}

// NATS as the image runs it: TLS with client certificates required, and of
// the cluster CA's certificates only the apiserver's and the watchcache
// replicas' are users. The apiserver and a replica given the certificates
// with a plain nats:// URL speak TLS and the events flow end to end, and
// again after NATS was away past the replica's grace: both reconnect over
// TLS and the replica catches up and serves.
func TestNATSOverTLSCarriesTheStreamToTheReplicas(t *testing.T) {
	ctx := ctxFor(t)
	p := newNATSPKI(t)
	n := startTLSNATS(t, p)
	if !strings.HasPrefix(n.URL, "nats://") {
		t.Fatalf("URL %s", n.URL)
	}
	api := apiservertest.Start(t, apiservertest.WithNATS(n.URL),
		apiservertest.WithNATSTLS(p.client(t, "apiserver-nats-client")))
	rep := startReplicaWith(t, n.URL, api, replica.Config{NATSTLS: p.client(t, filepath.Join(pki.WatchcacheDir, "client")),
		NATSGrace: 300 * time.Millisecond})
	direct, cached := client.Pods(api.Conn), client.Pods(rep.Conn)
	from := listRV(t, ctx, direct)
	w, err := cached.Watch(ctx, &metav1.ListRequest{ResourceVersion: from})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const events = 30
	flows := func(prefix string, w watch.Interface) {
		t.Helper()
		before, _, _ := rep.Stats("pods")
		published := api.Publisher.Stats().Published
		got := reading(t, w, events)
		if err := churn(ctx, direct, prefix, events); err != nil {
			t.Fatal(err)
		}
		if evs := got(); len(evs) != events {
			t.Fatalf("%s: %d events through the replica, want %d", prefix, len(evs), events)
		}
		after, _, _ := rep.Stats("pods")
		if applied := after.Applied - before.Applied; applied < events {
			t.Errorf("%s: the replica applied %d events from NATS, want at least %d (the rest came from backfills): %+v", prefix, applied, events, after)
		}
		// Acknowledgements are counted as they arrive.
		eventually(t, 10*time.Second, prefix+": the apiserver's messages acknowledged", func() bool {
			return api.Publisher.Stats().Published-published >= events
		})
	}
	flows("tls", w)

	n.stop()
	eventually(t, 10*time.Second, "the replica not ready without NATS", func() bool { return rep.Ready() != nil })
	n.start(t)
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := rep.WaitReady(wctx); err != nil {
		t.Fatalf("replica after the NATS restart: %v", err)
	}
	// The replica may be back before the apiserver has reconnected; what
	// it publishes before then is lost and backfilled, not carried.
	eventually(t, 30*time.Second, "the apiserver reconnected to NATS", api.Publisher.Connected)
	w2, err := cached.Watch(ctx, &metav1.ListRequest{ResourceVersion: listRV(t, ctx, direct)})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	flows("restarted", w2)
}

// Who NATS admits: the two users' certificates, over a nats:// URL; no
// certificate, a certificate of another CA, a certificate of the cluster
// CA that is not a user, and a client with no TLS configuration are all
// refused. A client configured for TLS refuses a NATS without it rather
// than speak plain text.
func TestNATSOverTLSRefusesEveryoneElse(t *testing.T) {
	p, other := newNATSPKI(t), newNATSPKI(t)
	n := startTLSNATS(t, p)
	for _, pair := range []string{"apiserver-nats-client", filepath.Join(pki.WatchcacheDir, "client")} {
		if err := connect(n.URL, nats.Secure(p.client(t, pair))); err != nil {
			t.Errorf("%s is refused: %v", pair, err)
		}
	}
	otherCA := p.client(t, "")
	pair, err := tls.LoadX509KeyPair(other.path("watchcache/client.crt"), other.path("watchcache/client.key"))
	if err != nil {
		t.Fatal(err)
	}
	otherCA.Certificates = []tls.Certificate{pair}
	refused := []struct {
		name string
		opts []nats.Option
		want error // nil: any error
	}{
		{"no certificate", []nats.Option{nats.Secure(p.client(t, ""))}, nil},
		{"the watchcache's certificate of another CA", []nats.Option{nats.Secure(otherCA)}, nil},
		{"a kubelet's certificate of the cluster CA", []nats.Option{nats.Secure(p.client(t, pki.KubeletCertName("node-1")))}, nats.ErrAuthorization},
		{"an administrator's certificate of the cluster CA", []nats.Option{nats.Secure(p.client(t, "admin"))}, nats.ErrAuthorization},
		{"no TLS configuration", nil, nil},
	}
	for _, r := range refused {
		err := connect(n.URL, r.opts...)
		switch {
		case err == nil:
			t.Errorf("%s: connected", r.name)
		case r.want != nil && !errors.Is(err, r.want):
			t.Errorf("%s: %v, want %v", r.name, err, r.want)
		default:
			t.Logf("%s: refused: %v", r.name, err)
		}
	}
	plain := startNATS(t)
	if err := connect(plain.URL, nats.Secure(p.client(t, "apiserver-nats-client"))); !errors.Is(err, nats.ErrSecureConnWanted) {
		t.Errorf("a TLS client to a plain NATS: %v, want %v", err, nats.ErrSecureConnWanted)
	}
}
