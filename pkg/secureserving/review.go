package secureserving

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Where the apiserver answers the two reviews.
const (
	SubjectAccessReviewPath = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
	TokenReviewPath         = "/apis/authentication.k8s.io/v1/tokenreviews"
)

// reviewTimeout bounds one review.
const reviewTimeout = 10 * time.Second

// HTTPClient is a client for the reviews: TLS with cfg (the component's
// client certificate and the cluster CA), each review bounded to 10 s.
func HTTPClient(cfg *tls.Config) *http.Client {
	return &http.Client{Timeout: reviewTimeout, Transport: &http.Transport{TLSClientConfig: cfg, MaxIdleConnsPerHost: 16}}
}

// reviewClient posts one kind of review to the apiserver and reads its answer.
type reviewClient struct {
	url, what string
	client    *http.Client
}

func newReviewClient(server, path, what string, hc *http.Client) reviewClient {
	return reviewClient{url: strings.TrimSuffix(server, "/") + path, what: what, client: hc}
}

// post sends review as JSON and decodes the apiserver's answer into answer.
func (c reviewClient) post(ctx context.Context, review, answer any) error {
	body, err := json.Marshal(review)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", c.what, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s: %w", c.what, err)
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		var st struct{ Message string }
		if json.Unmarshal(data, &st) != nil || st.Message == "" {
			st.Message = string(bytes.TrimSpace(data))
		}
		return fmt.Errorf("%s: %s: %s", c.what, resp.Status, st.Message)
	}
	if err := json.Unmarshal(data, answer); err != nil {
		return fmt.Errorf("%s: %w", c.what, err)
	}
	return nil
}

// SubjectAccessReviews is the Webhook authorization mode of a component
// that delegates to the apiserver: each decision is a SubjectAccessReview
// the apiserver answers with its own authorizers (RBAC, Node), sent with
// the component's credentials (whose user may create them:
// system:auth-delegator, or a role with the same rule).
type SubjectAccessReviews struct{ reviews reviewClient }

var _ Authorizer = (*SubjectAccessReviews)(nil)

// NewSubjectAccessReviews asks the apiserver at server (https://host:port)
// with hc.
func NewSubjectAccessReviews(server string, hc *http.Client) *SubjectAccessReviews {
	return &SubjectAccessReviews{newReviewClient(server, SubjectAccessReviewPath, "subjectaccessreview", hc)}
}

// The authorization.k8s.io/v1 shapes sent and read.
type (
	accessReview struct {
		APIVersion string       `json:"apiVersion"`
		Kind       string       `json:"kind"`
		Spec       reviewSpec   `json:"spec"`
		Status     reviewStatus `json:"status"`
	}
	reviewSpec struct {
		User                  string                 `json:"user,omitempty"`
		UID                   string                 `json:"uid,omitempty"`
		Groups                []string               `json:"groups,omitempty"`
		Extra                 map[string][]string    `json:"extra,omitempty"`
		ResourceAttributes    *resourceAttributes    `json:"resourceAttributes,omitempty"`
		NonResourceAttributes *nonResourceAttributes `json:"nonResourceAttributes,omitempty"`
	}
	resourceAttributes struct {
		Namespace     string    `json:"namespace,omitempty"`
		Verb          string    `json:"verb"`
		Group         string    `json:"group"`
		Resource      string    `json:"resource"`
		Subresource   string    `json:"subresource,omitempty"`
		Name          string    `json:"name,omitempty"`
		FieldSelector *selector `json:"fieldSelector,omitempty"`
		LabelSelector *selector `json:"labelSelector,omitempty"`
	}
	selector struct {
		RawSelector string `json:"rawSelector"`
	}
	nonResourceAttributes struct {
		Path string `json:"path"`
		Verb string `json:"verb"`
	}
	reviewStatus struct {
		Allowed         bool   `json:"allowed"`
		Denied          bool   `json:"denied,omitempty"`
		Reason          string `json:"reason,omitempty"`
		EvaluationError string `json:"evaluationError,omitempty"`
	}
)

func accessReviewOf(a Attributes) accessReview {
	r := accessReview{APIVersion: "authorization.k8s.io/v1", Kind: "SubjectAccessReview",
		Spec: reviewSpec{User: a.User.Name, UID: a.User.UID, Groups: a.User.Groups, Extra: a.User.Extra}}
	if a.Resource == "" {
		r.Spec.NonResourceAttributes = &nonResourceAttributes{Path: a.Path, Verb: a.Verb}
		return r
	}
	ra := &resourceAttributes{Namespace: a.Namespace, Verb: a.Verb, Group: a.Group, Resource: a.Resource,
		Subresource: a.Subresource, Name: a.Name}
	if a.FieldSelector != "" {
		ra.FieldSelector = &selector{RawSelector: a.FieldSelector}
	}
	if a.LabelSelector != "" {
		ra.LabelSelector = &selector{RawSelector: a.LabelSelector}
	}
	r.Spec.ResourceAttributes = ra
	return r
}

// Authorize posts a review of a and returns the apiserver's answer. An
// answer that is neither allowed nor a decision (an evaluation error) is
// an error.
func (z *SubjectAccessReviews) Authorize(ctx context.Context, a Attributes) (Decision, error) {
	var answer accessReview
	if err := z.reviews.post(ctx, accessReviewOf(a), &answer); err != nil {
		return Decision{}, err
	}
	st := answer.Status
	if !st.Allowed && st.EvaluationError != "" {
		return Decision{}, fmt.Errorf("subjectaccessreview: %s", st.EvaluationError)
	}
	return Decision{Allowed: st.Allowed && !st.Denied, Reason: st.Reason}, nil
}

// TokenAuthenticator names the user of a bearer token; ok=false with no
// error means the token is not valid.
type TokenAuthenticator interface {
	AuthenticateToken(ctx context.Context, token string) (u User, ok bool, err error)
}

// TokenReviews is the webhook token authentication of a component that
// delegates to the apiserver: each token is a TokenReview the apiserver
// answers with its own authenticators, sent with the component's
// credentials.
type TokenReviews struct{ reviews reviewClient }

var _ TokenAuthenticator = (*TokenReviews)(nil)

// NewTokenReviews asks the apiserver at server (https://host:port) with hc.
func NewTokenReviews(server string, hc *http.Client) *TokenReviews {
	return &TokenReviews{newReviewClient(server, TokenReviewPath, "tokenreview", hc)}
}

type tokenReview struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Spec       struct {
		Token string `json:"token"`
	} `json:"spec"`
	Status struct {
		Authenticated bool `json:"authenticated"`
		User          struct {
			Username string              `json:"username"`
			UID      string              `json:"uid"`
			Groups   []string            `json:"groups"`
			Extra    map[string][]string `json:"extra"`
		} `json:"user"`
		Error string `json:"error"`
	} `json:"status"`
}

// AuthenticateToken posts a review of token and returns the apiserver's
// answer.
func (r *TokenReviews) AuthenticateToken(ctx context.Context, token string) (User, bool, error) {
	review := tokenReview{APIVersion: "authentication.k8s.io/v1", Kind: "TokenReview"}
	review.Spec.Token = token
	var answer tokenReview
	if err := r.reviews.post(ctx, review, &answer); err != nil {
		return User{}, false, err
	}
	st := answer.Status
	if !st.Authenticated || st.User.Username == "" {
		return User{}, false, nil
	}
	return User{Name: st.User.Username, UID: st.User.UID, Groups: st.User.Groups, Extra: st.User.Extra}, true, nil
}
