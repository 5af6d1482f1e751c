package pki

import (
	"bytes"
	"crypto/tls"
	"errors"
	"path/filepath"
	"testing"
)

// NATS serves by its compose name with the cluster CA beside its pair, and
// its two clients, the apiserver and the watchcache replicas, reach it
// with the configurations ClientTLS makes from their files: a real
// handshake with client certificates required, as the server runs it.
func TestNATSPairsServeNATSToItsClients(t *testing.T) {
	c := newCluster(t)
	if !bytes.Equal(c.read(c.pkiPath(filepath.Join(NATSDir, "ca.crt"))), c.read(c.pkiPath("ca.crt"))) {
		t.Error("nats/ca.crt is not the cluster CA")
	}
	server := c.cert(filepath.Join(NATSDir, "server"))
	if server.Subject.CommonName != "nats" {
		t.Errorf("nats/server.crt is CN %q", server.Subject.CommonName)
	}
	if user := c.cert("apiserver-nats-client").Subject.CommonName; user != APIServerNATSClientUser {
		t.Errorf("apiserver-nats-client.crt is CN %q, want %q", user, APIServerNATSClientUser)
	}
	serverConf := &tls.Config{
		Certificates: []tls.Certificate{c.keyPair(filepath.Join(NATSDir, "server"))},
		ClientCAs:    c.pool(ClusterCA),
		ClientAuth:   tls.RequireAndVerifyClientCert,
	}
	clients := map[string]string{
		"apiserver":  "apiserver-nats-client",
		"watchcache": filepath.Join(WatchcacheDir, "client"),
	}
	for who, pair := range clients {
		for _, name := range []string{"nats", "localhost", "127.0.0.1"} {
			conf, err := ClientTLS(c.pkiPath(filepath.Join(NATSDir, "ca.crt")), c.pkiPath(pair+".crt"), c.pkiPath(pair+".key"))
			if err != nil {
				t.Fatal(err)
			}
			conf.ServerName = name
			if err := handshake(t, serverConf, conf); err != nil {
				t.Errorf("%s to NATS as %s: %v", who, name, err)
			}
		}
	}
	conf, err := ClientTLS(c.pkiPath("ca.crt"), "", "")
	if err != nil {
		t.Fatal(err)
	}
	conf.ServerName = "nats"
	if err := handshake(t, serverConf, conf); err == nil {
		t.Error("a client without a certificate completed the handshake")
	}
	conf.ServerName = "apiserver"
	if err := handshake(t, &tls.Config{Certificates: serverConf.Certificates}, conf); err == nil {
		t.Error("nats/server.crt serves the name apiserver")
	}
}

func TestClientTLSRefusesHalfAConfiguration(t *testing.T) {
	if cfg, err := ClientTLS("", "", ""); cfg != nil || err != nil {
		t.Errorf("no files: %v, %v; want nil (plain), no error", cfg, err)
	}
	c := newCluster(t)
	ca, crt, key := c.pkiPath("ca.crt"), c.pkiPath("apiserver-nats-client.crt"), c.pkiPath("apiserver-nats-client.key")
	for name, files := range map[string][3]string{
		"no CA":          {"", crt, key},
		"no key":         {ca, crt, ""},
		"no certificate": {ca, "", key},
	} {
		if _, err := ClientTLS(files[0], files[1], files[2]); !errors.Is(err, ErrIncompleteTLS) {
			t.Errorf("%s: got %v, want ErrIncompleteTLS", name, err)
		}
	}
}
