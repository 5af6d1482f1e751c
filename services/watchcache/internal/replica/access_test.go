package replica

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"testing"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"podline.dev/pkg/apierrors"
	"podline.dev/proto/apis"
)

func peerWith(user string, groups ...string) context.Context {
	cert := &x509.Certificate{Subject: pkix.Name{CommonName: user, Organization: groups}}
	info := credentials.TLSInfo{State: tls.ConnectionState{
		PeerCertificates: []*x509.Certificate{cert},
		VerifiedChains:   [][]*x509.Certificate{{cert}},
	}}
	return peer.NewContext(context.Background(), &peer.Peer{AuthInfo: info})
}

func TestAccessAdmitsTheListedComponentsOnly(t *testing.T) {
	secrets, _ := apis.ByMessage("podline.core.v1.Secret")
	a := Access{Users: []string{"system:kube-scheduler"}, Groups: []string{"system:nodes"}}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		ok   bool
	}{
		{"listed user", peerWith("system:kube-scheduler"), true},
		{"member of a listed group", peerWith("system:node:worker-1", "system:nodes"), true},
		{"other user", peerWith("jane", "developers"), false},
		{"no certificate", context.Background(), false},
	} {
		err := a.check(tc.ctx, secrets)
		if tc.ok != (err == nil) {
			t.Errorf("%s: err = %v", tc.name, err)
		}
		if err != nil && !apierrors.IsForbidden(err) {
			t.Errorf("%s: err = %v, want 403", tc.name, err)
		}
	}
	if err := (Access{}).check(context.Background(), secrets); err != nil {
		t.Errorf("open access refused: %v", err)
	}
}
