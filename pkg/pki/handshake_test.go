package pki

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
)

// The certificates work as the components will use them: a real TLS
// handshake on loopback, the server requiring a client certificate from its
// CA, the client checking the server's name.
func TestHandshakes(t *testing.T) {
	c := newCluster(t)
	tests := []struct {
		name       string
		server     string // certificate the server presents
		serverName string // name the client dials
		serverCA   Authority
		client     string // certificate the client presents
		clientCA   Authority
		wantOK     bool
	}{
		{"admin to apiserver", "apiserver", "kubernetes.default.svc", ClusterCA, "admin", ClusterCA, true},
		{"kubelet to apiserver", "apiserver", "apiserver", ClusterCA, "kubelet-worker-1", ClusterCA, true},
		{"scheduler to apiserver", "apiserver", "localhost", ClusterCA, "scheduler", ClusterCA, true},
		{"apiserver to etcd", "etcd/etcd-1/server", "etcd-1", EtcdCA, "apiserver-etcd-client", EtcdCA, true},
		{"peer to peer", "etcd/etcd-1/peer", "etcd-1", EtcdCA, "etcd/etcd-2/peer", EtcdCA, true},
		{"etcdctl in member", "etcd/etcd-2/server", "127.0.0.1", EtcdCA, "etcd/etcd-2/server", EtcdCA, true},
		{"admin to etcd is refused", "etcd/etcd-1/server", "etcd-1", EtcdCA, "admin", ClusterCA, false},
		{"etcd client to apiserver is refused", "apiserver", "apiserver", ClusterCA, "apiserver-etcd-client", EtcdCA, false},
		{"wrong member name is refused", "etcd/etcd-1/server", "etcd-2", EtcdCA, "apiserver-etcd-client", EtcdCA, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			serverConf := &tls.Config{
				Certificates: []tls.Certificate{c.keyPair(tt.server)},
				ClientCAs:    c.pool(tt.serverCA),
				ClientAuth:   tls.RequireAndVerifyClientCert,
			}
			clientConf := &tls.Config{
				Certificates: []tls.Certificate{c.keyPair(tt.client)},
				RootCAs:      c.pool(tt.clientCA),
				ServerName:   tt.serverName,
			}
			err := handshake(t, serverConf, clientConf)
			if tt.wantOK && err != nil {
				t.Errorf("handshake failed: %v", err)
			}
			if !tt.wantOK && err == nil {
				t.Error("handshake succeeded, want it refused")
			}
		})
	}
}

// handshake runs one TLS handshake over loopback and returns the first
// error either side saw.
func handshake(t *testing.T, serverConf, clientConf *tls.Config) error {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	serverErr := make(chan error, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			serverErr <- err
			return
		}
		defer conn.Close()
		serverErr <- tls.Server(conn, serverConf).Handshake()
	}()
	conn, err := tls.Dial("tcp", ln.Addr().String(), clientConf)
	if err == nil {
		// A TLS 1.3 client finishes before the server has checked its
		// certificate, so the server's result is the verdict.
		conn.Write([]byte{0})
		conn.Close()
	}
	if sErr := <-serverErr; sErr != nil {
		return sErr
	}
	return err
}

func (c cluster) keyPair(name string) tls.Certificate {
	c.t.Helper()
	pair, err := tls.LoadX509KeyPair(c.pkiPath(name+".crt"), c.pkiPath(name+".key"))
	if err != nil {
		c.t.Fatal(err)
	}
	return pair
}

func (c cluster) pool(ca Authority) *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(c.cert(string(ca)))
	return pool
}
