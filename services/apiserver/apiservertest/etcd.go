package apiservertest

import (
	"errors"
	"fmt"
	"net/url"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	"podline.dev/pkg/testenv"
	"podline.dev/services/apiserver/internal/storage"
)

// Etcd is an embedded single-member etcd.
type Etcd struct {
	Server   *embed.Etcd
	Client   *clientv3.Client
	Endpoint string
	stop     sync.Once
}

// Stop stops the member (a test of etcd being down); the test's cleanup
// does not stop it again.
func (e *Etcd) Stop() { e.stop.Do(e.Server.Close) }

// StartEtcd runs an etcd member in t.TempDir() until the test ends.
func StartEtcd(t testing.TB) *Etcd {
	t.Helper()
	// The ports are free when picked, but another test process may take
	// one before etcd binds it: then etcd starts again on new ports.
	var (
		e      *embed.Etcd
		client url.URL
		err    error
	)
	for attempt := 0; ; attempt++ {
		cfg := embed.NewConfig()
		cfg.Dir = t.TempDir()
		cfg.LogLevel = "panic"
		// NewConfig leaves this 0 (the etcd binary's flag defaults it to
		// 300ms), and at 0 every request counts as slow: etcd formats each
		// one for a warning the panic-level logger then drops.
		cfg.WarningUnaryRequestDuration = embed.DefaultWarningUnaryRequestDuration
		var peer url.URL
		client, peer = url.URL{Scheme: "http", Host: testenv.FreeAddr(t)}, url.URL{Scheme: "http", Host: testenv.FreeAddr(t)}
		cfg.ListenClientUrls = []url.URL{client}
		cfg.AdvertiseClientUrls = []url.URL{client}
		cfg.ListenPeerUrls = []url.URL{peer}
		cfg.AdvertisePeerUrls = []url.URL{peer}
		cfg.InitialCluster = fmt.Sprintf("%s=%s", cfg.Name, peer.String())
		if e, err = embed.StartEtcd(cfg); err == nil {
			break
		}
		if attempt == 4 || !errors.Is(err, syscall.EADDRINUSE) {
			t.Fatalf("start etcd: %v", err)
		}
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		t.Fatal("etcd did not become ready")
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{client.String()}, DialTimeout: 5 * time.Second, MaxCallRecvMsgSize: storage.MaxEtcdResponseBytes})
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	etcd := &Etcd{Server: e, Client: c, Endpoint: client.String()}
	t.Cleanup(etcd.Stop)
	return etcd
}
