package authn

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"podline.dev/services/apiserver/internal/request"
)

func TestX509(t *testing.T) {
	ca, other := newTestCA(t), newTestCA(t)
	a := NewX509(ca.pool())
	tests := []struct {
		name     string
		cert     *x509.Certificate
		wantUser string
		wantGrps []string
		wantErr  error
	}{
		{name: "CN is the user, O are the groups",
			cert:     ca.issue(t, certOpts{cn: "system:node:worker-1", orgs: []string{"system:nodes"}}),
			wantUser: "system:node:worker-1", wantGrps: []string{"system:nodes"}},
		{name: "admin in system:masters",
			cert:     ca.issue(t, certOpts{cn: "kubernetes-admin", orgs: []string{"system:masters"}}),
			wantUser: "kubernetes-admin", wantGrps: []string{"system:masters"}},
		{name: "signed by another CA", cert: other.issue(t, certOpts{cn: "mallory"}), wantErr: ErrInvalidCertificate},
		{name: "expired", cert: ca.issue(t, certOpts{cn: "old", notBefore: time.Now().Add(-2 * time.Hour), notAfter: time.Now().Add(-time.Hour)}), wantErr: ErrInvalidCertificate},
		{name: "server usage only", cert: ca.issue(t, certOpts{cn: "srv", usage: x509.ExtKeyUsageServerAuth}), wantErr: ErrInvalidCertificate},
		{name: "no common name", cert: ca.issue(t, certOpts{orgs: []string{"devs"}}), wantErr: ErrInvalidCertificate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for round := 0; round < 2; round++ { // the second round is served from the cache
				u, ok, err := a.Authenticate(context.Background(), Credentials{PeerCertificates: []*x509.Certificate{tt.cert}})
				if tt.wantErr != nil {
					if !errors.Is(err, tt.wantErr) || ok {
						t.Fatalf("round %d: got %v, %v; want %v", round, ok, err, tt.wantErr)
					}
					continue
				}
				if err != nil || !ok || u.Name != tt.wantUser || !slices.Equal(u.Groups, tt.wantGrps) {
					t.Fatalf("round %d: got %+v, %v, %v", round, u, ok, err)
				}
			}
		})
	}
	if _, ok, err := a.Authenticate(context.Background(), Credentials{BearerToken: "x"}); ok || err != nil {
		t.Fatalf("no certificate: got %v, %v; want not mine", ok, err)
	}
}

func TestParseTokenFile(t *testing.T) {
	tests := []struct {
		name, file string
		token      string
		want       *request.User
		wantErr    string
	}{
		{name: "groups quoted", file: "abc123,kubelet-bootstrap,10001,\"system:bootstrappers,system:nodes\"\n", token: "abc123",
			want: &request.User{Name: "kubelet-bootstrap", UID: "10001", Groups: []string{"system:bootstrappers", "system:nodes"}}},
		{name: "no groups, comment line", file: "# bootstrap\ntok,alice,1\n", token: "tok", want: &request.User{Name: "alice", UID: "1"}},
		{name: "unknown token", file: "tok,alice,1\n", token: "other"},
		{name: "too few fields", file: "tok,alice\n", wantErr: "line 1"},
		{name: "duplicate token", file: "tok,a,1\ntok,b,2\n", wantErr: "duplicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := ParseTokenFile(strings.NewReader(tt.file))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			u, ok, err := st.Authenticate(context.Background(), Credentials{BearerToken: tt.token})
			if err != nil || ok != (tt.want != nil) {
				t.Fatalf("got %v, %v", ok, err)
			}
			if tt.want != nil && (u.Name != tt.want.Name || u.UID != tt.want.UID || !slices.Equal(u.Groups, tt.want.Groups)) {
				t.Fatalf("user = %+v, want %+v", u, tt.want)
			}
		})
	}
}

type accounts map[string]string // namespace/name -> uid

func (a accounts) ServiceAccountUID(ns, name string) (string, bool) {
	uid, ok := a[ns+"/"+name]
	return uid, ok
}

func (a accounts) Pod(string, string) (string, time.Time, bool) { return "", time.Time{}, false }

// objects are accounts and Pods (namespace/name) for bound tokens.
type objects struct {
	accounts
	pods map[string]testPod
}

type testPod struct {
	uid      string
	deletion time.Time
}

func (o objects) Pod(ns, name string) (string, time.Time, bool) {
	p, ok := o.pods[ns+"/"+name]
	return p.uid, p.deletion, ok
}

func TestServiceAccountTokens(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	otherKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	issuer := NewTokenIssuer(key, DefaultIssuer)
	issuer.now = func() time.Time { return now }
	verifier := NewServiceAccountTokens(&key.PublicKey, DefaultIssuer, []string{DefaultIssuer},
		accounts{"default/builder": "uid-1", "default/recreated": "uid-new"})
	verifier.now = func() time.Time { return now.Add(time.Minute) }
	sign := func(iss *TokenIssuer, sa ServiceAccountRef, aud []string, ttl time.Duration) string {
		tok, exp, err := iss.Issue(sa, aud, ttl)
		if err != nil {
			t.Fatal(err)
		}
		if !exp.After(now) && ttl > 0 {
			t.Fatalf("expiry %v not after now", exp)
		}
		return tok
	}
	builder := ServiceAccountRef{Namespace: "default", Name: "builder", UID: "uid-1"}
	forged := NewTokenIssuer(otherKey, DefaultIssuer)
	foreign := NewTokenIssuer(key, "https://elsewhere.example")
	tests := []struct {
		name    string
		token   string
		wantOK  bool
		wantErr error
	}{
		{name: "valid bound token", token: sign(issuer, builder, []string{DefaultIssuer}, time.Hour), wantOK: true},
		{name: "expired", token: sign(issuer, builder, []string{DefaultIssuer}, 30*time.Second), wantErr: ErrInvalidToken},
		{name: "another audience", token: sign(issuer, builder, []string{"vault"}, time.Hour), wantErr: ErrInvalidToken},
		{name: "signed by another key", token: sign(forged, builder, []string{DefaultIssuer}, time.Hour), wantErr: ErrInvalidToken},
		{name: "another issuer is not ours", token: sign(foreign, builder, []string{DefaultIssuer}, time.Hour)},
		{name: "not a JWT", token: "abc.def"},
		{name: "account deleted", token: sign(issuer, ServiceAccountRef{Namespace: "default", Name: "gone", UID: "u"}, []string{DefaultIssuer}, time.Hour), wantErr: ErrServiceAccountGone},
		{name: "account recreated with another uid", token: sign(issuer, ServiceAccountRef{Namespace: "default", Name: "recreated", UID: "uid-old"}, []string{DefaultIssuer}, time.Hour), wantErr: ErrServiceAccountGone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, ok, err := verifier.Authenticate(context.Background(), Credentials{BearerToken: tt.token})
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) || ok != tt.wantOK {
				t.Fatalf("got ok=%v err=%v; want ok=%v err=%v", ok, err, tt.wantOK, tt.wantErr)
			}
			if ok {
				want := []string{"system:serviceaccounts", "system:serviceaccounts:default"}
				if u.Name != "system:serviceaccount:default:builder" || u.UID != "uid-1" || !slices.Equal(u.Groups, want) {
					t.Fatalf("user = %+v", u)
				}
			}
		})
	}
}

func TestChain(t *testing.T) {
	tokens := NewStaticTokens(map[string]*request.User{"good": {Name: "bootstrap", Groups: []string{"system:bootstrappers"}}})
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	sa := NewServiceAccountTokens(&key.PublicKey, DefaultIssuer, []string{DefaultIssuer}, accounts{})
	expired, _, _ := NewTokenIssuer(key, DefaultIssuer).Issue(ServiceAccountRef{Namespace: "a", Name: "b"}, []string{DefaultIssuer}, -time.Hour)
	chain := Chain{tokens, sa}
	tests := []struct {
		name    string
		creds   Credentials
		want    string
		wantErr error
	}{
		{name: "nothing presented", wantErr: ErrNoCredentials},
		{name: "static token", creds: Credentials{BearerToken: "good"}, want: "bootstrap"},
		{name: "unknown opaque token", creds: Credentials{BearerToken: "nope"}, wantErr: ErrNoCredentials},
		{name: "expired service account token", creds: Credentials{BearerToken: expired}, wantErr: ErrInvalidToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := Traced(context.Background(), chain, tt.creds)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || u.Name != tt.want || !u.InGroup(request.AllAuthenticated) {
				t.Fatalf("got %+v, %v", u, err)
			}
		})
	}
}

func TestBearerToken(t *testing.T) {
	for in, want := range map[string]string{"Bearer abc": "abc", "bearer  abc ": "abc", "Basic abc": "", "": "", "Bearer": ""} {
		if got := BearerToken(in); got != want {
			t.Errorf("BearerToken(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBoundServiceAccountTokens(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	issuer := NewTokenIssuer(key, DefaultIssuer)
	verifier := NewServiceAccountTokens(&key.PublicKey, DefaultIssuer, []string{DefaultIssuer}, objects{
		accounts: accounts{"default/default": "sa-uid"},
		pods: map[string]testPod{
			"default/web":       {uid: "pod-uid"},
			"default/recreated": {uid: "pod-uid-new"},
			"default/leaving":   {uid: "pod-uid", deletion: now.Add(-30 * time.Second)},
			"default/left":      {uid: "pod-uid", deletion: now.Add(-2 * time.Minute)},
		},
	})
	verifier.now = func() time.Time { return now }
	sa := ServiceAccountRef{Namespace: "default", Name: "default", UID: "sa-uid"}
	tests := []struct {
		name    string
		pod     string
		node    *ObjectRef
		wantErr error
	}{
		{name: "bound to a running pod on a node", pod: "web", node: &ObjectRef{Name: "worker-1", UID: "node-uid"}},
		{name: "pod deleted", pod: "gone", wantErr: ErrTokenInvalidated},
		{name: "pod recreated under the same name", pod: "recreated", wantErr: ErrTokenInvalidated},
		{name: "pod being deleted, within the leeway", pod: "leaving"},
		{name: "pod being deleted for longer than the leeway", pod: "left", wantErr: ErrTokenInvalidated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok, _, err := issuer.IssueBound(sa, Binding{Pod: &ObjectRef{Name: tt.pod, UID: "pod-uid"}, Node: tt.node}, []string{DefaultIssuer}, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			u, ok, err := verifier.Authenticate(context.Background(), Credentials{BearerToken: tok})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || ok {
					t.Fatalf("got ok=%v err=%v; want %v", ok, err, tt.wantErr)
				}
				return
			}
			if err != nil || !ok || u.Name != "system:serviceaccount:default:default" {
				t.Fatalf("got %+v, %v, %v", u, ok, err)
			}
			if got := u.Extra[ExtraPodName]; !slices.Equal(got, []string{tt.pod}) || !slices.Equal(u.Extra[ExtraPodUID], []string{"pod-uid"}) {
				t.Fatalf("extra = %v", u.Extra)
			}
			if jti := u.Extra[ExtraCredentialID]; len(jti) != 1 || !strings.HasPrefix(jti[0], "JTI=") {
				t.Fatalf("credential id = %v", jti)
			}
			if tt.node != nil && (!slices.Equal(u.Extra[ExtraNodeName], []string{"worker-1"}) || !slices.Equal(u.Extra[ExtraNodeUID], []string{"node-uid"})) {
				t.Fatalf("node extra = %v", u.Extra)
			}
		})
	}
}

func TestTokenChainAudiences(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	issuer := NewTokenIssuer(key, DefaultIssuer)
	api := []string{DefaultIssuer}
	sat := NewServiceAccountTokens(&key.PublicKey, DefaultIssuer, api, accounts{"default/builder": "uid-1"})
	static := NewStaticTokens(map[string]*request.User{"bootstrap-token": {Name: "kubelet-bootstrap"}})
	chain := TokenChain{AudienceAgnostic(static, api), sat}
	builder := ServiceAccountRef{Namespace: "default", Name: "builder", UID: "uid-1"}
	forVault, _, _ := issuer.Issue(builder, []string{"vault", DefaultIssuer}, time.Hour)
	tests := []struct {
		name        string
		token       string
		audiences   []string
		wantUser    string
		wantMatched []string
		wantErr     error
	}{
		{name: "service account token, the apiserver's audience", token: forVault, audiences: api, wantUser: "system:serviceaccount:default:builder", wantMatched: api},
		{name: "service account token, a review for vault", token: forVault, audiences: []string{"vault", "other"}, wantUser: "system:serviceaccount:default:builder", wantMatched: []string{"vault"}},
		{name: "service account token, an audience it is not for", token: forVault, audiences: []string{"other"}, wantErr: ErrInvalidToken},
		{name: "static token, the apiserver's audience", token: "bootstrap-token", audiences: api, wantUser: "kubelet-bootstrap", wantMatched: api},
		{name: "static token is for no other audience", token: "bootstrap-token", audiences: []string{"vault"}, wantErr: ErrNoCredentials},
		{name: "unknown token", token: "nope", audiences: api, wantErr: ErrNoCredentials},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, matched, err := chain.AuthenticateToken(context.Background(), tt.token, tt.audiences)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || u.Name != tt.wantUser || !u.InGroup(request.AllAuthenticated) || !slices.Equal(matched, tt.wantMatched) {
				t.Fatalf("got %+v, %v, %v", u, matched, err)
			}
		})
	}
}
