package authn

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"podline.dev/services/apiserver/internal/request"
)

// DefaultIssuer is kube-apiserver's usual --service-account-issuer; it is
// also the default API audience.
const DefaultIssuer = "https://kubernetes.default.svc.cluster.local"

// ServiceAccount user names and groups, as Kubernetes forms them.
const (
	ServiceAccountUserPrefix = "system:serviceaccount:"
	ServiceAccountsGroup     = "system:serviceaccounts"
)

// ServiceAccountRef names the account a token is bound to.
type ServiceAccountRef struct {
	Namespace, Name, UID string
}

// UserName is system:serviceaccount:<namespace>:<name>.
func (r ServiceAccountRef) UserName() string {
	return ServiceAccountUserPrefix + r.Namespace + ":" + r.Name
}

// claims are Kubernetes' bound ServiceAccount token claims.
type claims struct {
	jwt.RegisteredClaims
	Kubernetes kubernetesClaims `json:"kubernetes.io"`
}

type kubernetesClaims struct {
	Namespace      string    `json:"namespace"`
	ServiceAccount objectRef `json:"serviceaccount"`
}

type objectRef struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// TokenIssuer signs ServiceAccount tokens with the apiserver's key
// (--service-account-signing-key-file), as the TokenRequest API does.
type TokenIssuer struct {
	key    *ecdsa.PrivateKey
	issuer string
	now    func() time.Time
}

// NewTokenIssuer signs with key (ES256) as issuer.
func NewTokenIssuer(key *ecdsa.PrivateKey, issuer string) *TokenIssuer {
	return &TokenIssuer{key: key, issuer: issuer, now: time.Now}
}

// Issue returns a token for sa, valid for audiences until now+ttl.
func (i *TokenIssuer) Issue(sa ServiceAccountRef, audiences []string, ttl time.Duration) (string, time.Time, error) {
	now := i.now().Truncate(time.Second)
	exp := now.Add(ttl)
	c := claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    i.issuer,
			Subject:   sa.UserName(),
			Audience:  audiences,
			ExpiresAt: jwt.NewNumericDate(exp),
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
		},
		Kubernetes: kubernetesClaims{Namespace: sa.Namespace, ServiceAccount: objectRef{Name: sa.Name, UID: sa.UID}},
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodES256, c).SignedString(i.key)
	return tok, exp, err
}

// ServiceAccountLookup finds a ServiceAccount's uid; the token
// authenticator reads it from the apiserver's cache, not from etcd.
type ServiceAccountLookup interface {
	ServiceAccountUID(namespace, name string) (uid string, ok bool)
}

// ServiceAccountTokens authenticates tokens made by a TokenIssuer with the
// same key: signature, issuer, audience and expiry must hold, and the
// account must still exist with the uid the token names.
type ServiceAccountTokens struct {
	key       *ecdsa.PublicKey
	issuer    string
	audiences []string
	lookup    ServiceAccountLookup
	now       func() time.Time
}

var _ Authenticator = (*ServiceAccountTokens)(nil)

// NewServiceAccountTokens verifies with key (--service-account-key-file)
// tokens of issuer carrying one of audiences.
func NewServiceAccountTokens(key *ecdsa.PublicKey, issuer string, audiences []string, lookup ServiceAccountLookup) *ServiceAccountTokens {
	return &ServiceAccountTokens{key: key, issuer: issuer, audiences: audiences, lookup: lookup, now: time.Now}
}

// Authenticate leaves tokens that are not JWTs of its issuer to others.
func (s *ServiceAccountTokens) Authenticate(_ context.Context, c Credentials) (*request.User, bool, error) {
	if strings.Count(c.BearerToken, ".") != 2 {
		return nil, false, nil
	}
	var unverified claims
	if _, _, err := jwt.NewParser().ParseUnverified(c.BearerToken, &unverified); err != nil || unverified.Issuer != s.issuer {
		return nil, false, nil
	}
	var cl claims
	_, err := jwt.ParseWithClaims(c.BearerToken, &cl, func(*jwt.Token) (any, error) { return s.key, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodES256.Alg()}),
		jwt.WithIssuer(s.issuer),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(s.now),
	)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	if !slices.ContainsFunc(cl.Audience, func(a string) bool { return slices.Contains(s.audiences, a) }) {
		return nil, false, fmt.Errorf("%w: token audiences %q are not the apiserver's %q", ErrInvalidToken, cl.Audience, s.audiences)
	}
	ref := ServiceAccountRef{Namespace: cl.Kubernetes.Namespace, Name: cl.Kubernetes.ServiceAccount.Name, UID: cl.Kubernetes.ServiceAccount.UID}
	if ref.Namespace == "" || ref.Name == "" || cl.Subject != ref.UserName() {
		return nil, false, fmt.Errorf("%w: subject %q does not match its kubernetes.io claims", ErrInvalidToken, cl.Subject)
	}
	uid, ok := s.lookup.ServiceAccountUID(ref.Namespace, ref.Name)
	if !ok || (ref.UID != "" && uid != ref.UID) {
		return nil, false, fmt.Errorf("%w: %s/%s", ErrServiceAccountGone, ref.Namespace, ref.Name)
	}
	return &request.User{
		Name:   ref.UserName(),
		UID:    uid,
		Groups: []string{ServiceAccountsGroup, ServiceAccountsGroup + ":" + ref.Namespace},
	}, true, nil
}
