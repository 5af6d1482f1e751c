package server

import (
	"context"
	"encoding/json"
	"errors"

	"podline.dev/pkg/apierrors"
	"podline.dev/services/apiserver/internal/authn"
)

// tokenReviewPath is where webhook token authenticators (a kubelet's
// --authentication-token-webhook) ask who a bearer token is.
const tokenReviewPath = "/apis/authentication.k8s.io/v1/tokenreviews"

// tokenReview is authentication.k8s.io/v1 TokenReview.
type tokenReview struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   objectMeta `json:"metadata"`
	Spec       struct {
		Token     string   `json:"token,omitempty"`
		Audiences []string `json:"audiences,omitempty"`
	} `json:"spec"`
	Status tokenReviewStatus `json:"status"`
}

type tokenReviewStatus struct {
	Authenticated bool      `json:"authenticated,omitempty"`
	User          *userInfo `json:"user,omitempty"`
	Audiences     []string  `json:"audiences,omitempty"`
	Error         string    `json:"error,omitempty"`
}

// reviewToken answers a TokenReview with the apiserver's own bearer-token
// authenticators (ServiceAccount tokens, static tokens; client
// certificates are not tokens): the token's user, and the audiences of
// the review (the apiserver's when it names none) the token is for. A
// token no authenticator accepts is answered, not refused: authenticated
// false, with the reason in status.error.
func (s *Server) reviewToken(ctx context.Context, body []byte) (*tokenReview, error) {
	review := &tokenReview{}
	if isProtobuf(body) {
		var err error
		if review, err = tokenReviewFromProto(body); err != nil {
			return nil, apierrors.NewBadRequest("the TokenReview body: " + err.Error())
		}
	} else if err := json.Unmarshal(body, review); err != nil {
		return nil, apierrors.NewBadRequest("the TokenReview body is not valid JSON: " + err.Error())
	}
	if review.Spec.Token == "" {
		return nil, apierrors.NewBadRequest("token is required for TokenReview in authentication")
	}
	review.APIVersion, review.Kind = "authentication.k8s.io/v1", "TokenReview"
	audiences := review.Spec.Audiences
	if len(audiences) == 0 {
		audiences = s.auth.audiences
	}
	u, matched, err := s.auth.tokens.AuthenticateToken(ctx, review.Spec.Token, audiences)
	switch {
	case errors.Is(err, authn.ErrNoCredentials):
	case err != nil:
		review.Status.Error = err.Error()
	default:
		review.Status = tokenReviewStatus{Authenticated: true, Audiences: matched,
			User: &userInfo{Username: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}}
	}
	return review, nil
}
