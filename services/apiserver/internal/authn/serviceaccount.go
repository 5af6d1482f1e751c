package authn

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/hex"
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
	Namespace      string     `json:"namespace"`
	ServiceAccount objectRef  `json:"serviceaccount"`
	Pod            *objectRef `json:"pod,omitempty"`
	Node           *objectRef `json:"node,omitempty"`
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

// ObjectRef names an object a token is bound to.
type ObjectRef struct {
	Name, UID string
}

// Binding is what a token is bound to besides its account: the Pod it was
// issued for (the token is void once that Pod is gone) and that Pod's
// Node, as the TokenRequest API binds the tokens kubelets mount.
type Binding struct {
	Pod, Node *ObjectRef
}

// Issue returns a token for sa, valid for audiences until now+ttl.
func (i *TokenIssuer) Issue(sa ServiceAccountRef, audiences []string, ttl time.Duration) (string, time.Time, error) {
	return i.IssueBound(sa, Binding{}, audiences, ttl)
}

// IssueBound is Issue for a token bound to b's objects, each with a
// credential id (jti).
func (i *TokenIssuer) IssueBound(sa ServiceAccountRef, b Binding, audiences []string, ttl time.Duration) (string, time.Time, error) {
	now := i.now().Truncate(time.Second)
	exp := now.Add(ttl)
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return "", time.Time{}, err
	}
	c := claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    i.issuer,
			Subject:   sa.UserName(),
			Audience:  audiences,
			ExpiresAt: jwt.NewNumericDate(exp),
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			ID:        hex.EncodeToString(jti),
		},
		Kubernetes: kubernetesClaims{Namespace: sa.Namespace, ServiceAccount: objectRef{Name: sa.Name, UID: sa.UID}},
	}
	if b.Pod != nil {
		c.Kubernetes.Pod = &objectRef{Name: b.Pod.Name, UID: b.Pod.UID}
	}
	if b.Node != nil {
		c.Kubernetes.Node = &objectRef{Name: b.Node.Name, UID: b.Node.UID}
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodES256, c).SignedString(i.key)
	return tok, exp, err
}

// ServiceAccountLookup finds the objects a token is bound to; the token
// authenticator reads them from the apiserver's caches, not from etcd.
type ServiceAccountLookup interface {
	// ServiceAccountUID is the uid of a ServiceAccount.
	ServiceAccountUID(namespace, name string) (uid string, ok bool)
	// Pod is the uid of a Pod and when its deletion was asked (zero
	// while it is not being deleted).
	Pod(namespace, name string) (uid string, deletion time.Time, ok bool)
}

// Keys of the user's extra that name what a bound token is bound to, as
// Kubernetes sets them.
const (
	ExtraPodName      = "authentication.kubernetes.io/pod-name"
	ExtraPodUID       = "authentication.kubernetes.io/pod-uid"
	ExtraNodeName     = "authentication.kubernetes.io/node-name"
	ExtraNodeUID      = "authentication.kubernetes.io/node-uid"
	ExtraCredentialID = "authentication.kubernetes.io/credential-id"
)

// deletionLeeway is how long a token bound to a Pod being deleted stays
// good (Kubernetes' leeway), so the Pod can finish its work.
const deletionLeeway = 60 * time.Second

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
// The token must be for one of the apiserver's audiences.
func (s *ServiceAccountTokens) Authenticate(ctx context.Context, c Credentials) (*request.User, bool, error) {
	u, _, ok, err := s.AuthenticateToken(ctx, c.BearerToken, s.audiences)
	return u, ok, err
}

// AuthenticateToken authenticates token for one of audiences (a
// TokenReview's) and returns those of them it is for.
func (s *ServiceAccountTokens) AuthenticateToken(_ context.Context, token string, audiences []string) (*request.User, []string, bool, error) {
	if strings.Count(token, ".") != 2 {
		return nil, nil, false, nil
	}
	var unverified claims
	if _, _, err := jwt.NewParser().ParseUnverified(token, &unverified); err != nil || unverified.Issuer != s.issuer {
		return nil, nil, false, nil
	}
	var cl claims
	_, err := jwt.ParseWithClaims(token, &cl, func(*jwt.Token) (any, error) { return s.key, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodES256.Alg()}),
		jwt.WithIssuer(s.issuer),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(s.now),
	)
	if err != nil {
		return nil, nil, false, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	var matched []string
	for _, a := range audiences {
		if slices.Contains(cl.Audience, a) {
			matched = append(matched, a)
		}
	}
	if len(matched) == 0 {
		return nil, nil, false, fmt.Errorf("%w: token audiences %q are not %q", ErrInvalidToken, cl.Audience, audiences)
	}
	ref := ServiceAccountRef{Namespace: cl.Kubernetes.Namespace, Name: cl.Kubernetes.ServiceAccount.Name, UID: cl.Kubernetes.ServiceAccount.UID}
	if ref.Namespace == "" || ref.Name == "" || cl.Subject != ref.UserName() {
		return nil, nil, false, fmt.Errorf("%w: subject %q does not match its kubernetes.io claims", ErrInvalidToken, cl.Subject)
	}
	uid, ok := s.lookup.ServiceAccountUID(ref.Namespace, ref.Name)
	if !ok || (ref.UID != "" && uid != ref.UID) {
		return nil, nil, false, fmt.Errorf("%w: %s/%s", ErrServiceAccountGone, ref.Namespace, ref.Name)
	}
	u := &request.User{
		Name:   ref.UserName(),
		UID:    uid,
		Groups: []string{ServiceAccountsGroup, ServiceAccountsGroup + ":" + ref.Namespace},
	}
	if err := s.checkBinding(ref.Namespace, cl.Kubernetes, u); err != nil {
		return nil, nil, false, err
	}
	if cl.ID != "" {
		u.Extra = withExtra(u.Extra, ExtraCredentialID, "JTI="+cl.ID)
	}
	return u, matched, true, nil
}

// checkBinding voids a token whose Pod is gone, was recreated, or has
// been being deleted for longer than the leeway, and names the Pod and
// Node in the user's extra.
func (s *ServiceAccountTokens) checkBinding(namespace string, k kubernetesClaims, u *request.User) error {
	if k.Pod == nil {
		return nil
	}
	uid, deletion, ok := s.lookup.Pod(namespace, k.Pod.Name)
	if !ok {
		return fmt.Errorf("%w: pod %s/%s", ErrTokenInvalidated, namespace, k.Pod.Name)
	}
	if uid != k.Pod.UID {
		return fmt.Errorf("%w: pod UID (%s) does not match claim (%s)", ErrTokenInvalidated, uid, k.Pod.UID)
	}
	if !deletion.IsZero() && deletion.Before(s.now().Add(-deletionLeeway)) {
		return fmt.Errorf("%w: pod %s/%s is being deleted", ErrTokenInvalidated, namespace, k.Pod.Name)
	}
	u.Extra = withExtra(u.Extra, ExtraPodName, k.Pod.Name)
	u.Extra = withExtra(u.Extra, ExtraPodUID, k.Pod.UID)
	if k.Node != nil {
		u.Extra = withExtra(u.Extra, ExtraNodeName, k.Node.Name)
		if k.Node.UID != "" {
			u.Extra = withExtra(u.Extra, ExtraNodeUID, k.Node.UID)
		}
	}
	return nil
}

func withExtra(m map[string][]string, k, v string) map[string][]string {
	if m == nil {
		m = map[string][]string{}
	}
	m[k] = []string{v}
	return m
}
