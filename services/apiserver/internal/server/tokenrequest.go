package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"time"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/field"
	"podline.dev/services/apiserver/internal/audit"
	"podline.dev/services/apiserver/internal/authn"
	"podline.dev/services/apiserver/internal/authz"
	"podline.dev/services/apiserver/internal/request"
)

// tokenRequestPath is the serviceaccounts/token subresource.
var tokenRequestPath = regexp.MustCompile(`^/api/v1/namespaces/([^/]+)/serviceaccounts/([^/]+)/token$`)

// Token lifetimes, as kube-apiserver bounds them.
const (
	defaultTokenSeconds = 3600
	minTokenSeconds     = 600
	maxTokenSeconds     = 1 << 32
)

// tokenRequest is authentication.k8s.io/v1 TokenRequest, the body and the
// answer of POST serviceaccounts/<name>/token.
type tokenRequest struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Metadata   tokenRequestMeta    `json:"metadata"`
	Spec       tokenRequestSpec    `json:"spec"`
	Status     *tokenRequestStatus `json:"status,omitempty"`
}

type tokenRequestMeta struct {
	Name              string  `json:"name,omitempty"`
	Namespace         string  `json:"namespace,omitempty"`
	CreationTimestamp *string `json:"creationTimestamp"`
}

type tokenRequestSpec struct {
	Audiences         []string        `json:"audiences"`
	ExpirationSeconds *int64          `json:"expirationSeconds,omitempty"`
	BoundObjectRef    json.RawMessage `json:"boundObjectRef"`
}

type tokenRequestStatus struct {
	Token               string `json:"token"`
	ExpirationTimestamp string `json:"expirationTimestamp"`
}

// withTokenRequest serves the TokenRequest API when the apiserver has a
// signing key: the caller must be allowed to create serviceaccounts/token
// (a kubelet, for the accounts of its Pods), the account must exist, and
// the answer carries a token bound to it, as the token a Pod mounts.
func (s *Server) withTokenRequest(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := tokenRequestPath.FindStringSubmatch(r.URL.Path)
		if m == nil || r.Method != http.MethodPost || s.auth == nil || s.auth.issuer == nil {
			next.ServeHTTP(w, r)
			return
		}
		namespace, name := m[1], m[2]
		u, _ := request.UserFrom(r.Context())
		a := authz.Attributes{User: u, Verb: "create", ResourceRequest: true, Resource: "serviceaccounts",
			Subresource: "token", Namespace: namespace, Name: name}
		rec := s.startAudit(r.Context(), a, nil)
		tr, err := s.issueToken(r, a)
		if err != nil {
			se := apierrors.FromError(err)
			rec.Complete(audit.ResponseStatus{Code: int(se.Status().GetCode()), Status: "Failure", Reason: se.Status().GetReason(), Message: se.Status().GetMessage()}, nil)
			writeStatus(w, se)
			return
		}
		rec.Complete(audit.ResponseStatus{Code: http.StatusCreated}, nil)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(tr)
	})
}

func (s *Server) issueToken(r *http.Request, a authz.Attributes) (*tokenRequest, error) {
	if err := s.authorize(r.Context(), a); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 1<<20))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	tr := &tokenRequest{}
	if isProtobuf(body) {
		if tr, err = tokenRequestFromProto(body); err != nil {
			return nil, apierrors.NewBadRequest("the TokenRequest body: " + err.Error())
		}
	} else if err := json.Unmarshal(body, tr); err != nil {
		return nil, apierrors.NewBadRequest("the TokenRequest body is not valid JSON: " + err.Error())
	}
	if tr.Kind != "" && tr.Kind != "TokenRequest" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("kind %q is not TokenRequest", tr.Kind))
	}
	seconds := int64(defaultTokenSeconds)
	if tr.Spec.ExpirationSeconds != nil {
		seconds = *tr.Spec.ExpirationSeconds
	}
	p := field.NewPath("spec", "expirationSeconds")
	switch {
	case seconds < minTokenSeconds:
		return nil, invalidTokenRequest(a.Name, field.Invalid(p, seconds, "may not specify a duration less than 10 minutes"))
	case seconds > maxTokenSeconds:
		return nil, invalidTokenRequest(a.Name, field.Invalid(p, seconds, "may not specify a duration larger than 2^32 seconds"))
	}
	obj, err := s.registries["serviceaccounts"].Get(r.Context(), a.Namespace, a.Name)
	if err != nil {
		return nil, err
	}
	audiences := tr.Spec.Audiences
	if len(audiences) == 0 {
		audiences = s.auth.audiences
	}
	tok, exp, err := s.auth.issuer.Issue(authn.ServiceAccountRef{Namespace: a.Namespace, Name: a.Name, UID: obj.GetMetadata().GetUid()},
		audiences, time.Duration(seconds)*time.Second)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return &tokenRequest{
		APIVersion: "authentication.k8s.io/v1", Kind: "TokenRequest",
		Metadata: tokenRequestMeta{Name: a.Name, Namespace: a.Namespace},
		Spec:     tokenRequestSpec{Audiences: audiences, ExpirationSeconds: &seconds, BoundObjectRef: tr.Spec.BoundObjectRef},
		Status:   &tokenRequestStatus{Token: tok, ExpirationTimestamp: exp.UTC().Format(time.RFC3339)},
	}, nil
}

func invalidTokenRequest(name string, e *field.Error) error {
	return apierrors.NewInvalid(apierrors.GroupKind{Group: "authentication.k8s.io", Kind: "TokenRequest"}, name, field.ErrorList{e})
}
