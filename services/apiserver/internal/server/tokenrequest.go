package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/field"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/internal/authn"
	"podline.dev/services/apiserver/internal/authz"
	"podline.dev/services/apiserver/internal/authz/node"
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
	BoundObjectRef    *boundObjectRef `json:"boundObjectRef"`
}

// boundObjectRef is the object a requested token is bound to.
type boundObjectRef struct {
	Kind       string `json:"kind,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
	Name       string `json:"name,omitempty"`
	UID        string `json:"uid,omitempty"`
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
		s.answerCreate(w, r, a, func() (any, error) { return s.issueToken(r, a) })
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
	binding, err := s.tokenBinding(r.Context(), a, tr.Spec.BoundObjectRef)
	if err != nil {
		return nil, err
	}
	audiences := tr.Spec.Audiences
	if len(audiences) == 0 {
		audiences = s.auth.audiences
	}
	tok, exp, err := s.auth.issuer.IssueBound(authn.ServiceAccountRef{Namespace: a.Namespace, Name: a.Name, UID: obj.GetMetadata().GetUid()},
		binding, audiences, time.Duration(seconds)*time.Second)
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

// tokenBinding checks the object a token is to be bound to, as
// kube-apiserver does: a Pod of the namespace that runs as the account,
// with the uid given (if any); the token then also names the Pod's Node.
// A kubelet (NodeRestriction's rule) may ask only for tokens bound to a
// Pod on its node.
func (s *Server) tokenBinding(ctx context.Context, a authz.Attributes, ref *boundObjectRef) (authn.Binding, error) {
	gr := apierrors.GroupResource{Resource: "serviceaccounts"}
	nodeName, isNode := node.NodeName(a.User)
	if ref == nil {
		if isNode {
			return authn.Binding{}, apierrors.NewForbidden(gr, a.Name, "node requested token not bound to a pod")
		}
		return authn.Binding{}, nil
	}
	if ref.APIVersion != "v1" || ref.Kind != "Pod" {
		if isNode {
			return authn.Binding{}, apierrors.NewForbidden(gr, a.Name, "node requested token not bound to a pod")
		}
		group, version, ok := strings.Cut(ref.APIVersion, "/")
		if !ok {
			group, version = "", ref.APIVersion
		}
		return authn.Binding{}, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s/%s, Kind=%s", group, version, ref.Kind))
	}
	if isNode && ref.UID == "" {
		return authn.Binding{}, apierrors.NewForbidden(gr, a.Name, "node requested token with a pod binding without a uid")
	}
	obj, err := s.registries["pods"].Get(ctx, a.Namespace, ref.Name)
	if err != nil {
		return authn.Binding{}, err
	}
	pod := obj.(*corev1.Pod)
	sa := pod.GetSpec().GetServiceAccountName()
	if sa == "" {
		sa = "default"
	}
	if sa != a.Name {
		return authn.Binding{}, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name.", a.Name))
	}
	uid := pod.GetMetadata().GetUid()
	if ref.UID != "" && ref.UID != uid {
		reason := fmt.Sprintf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID)
		if isNode {
			return authn.Binding{}, apierrors.NewForbidden(gr, a.Name, reason)
		}
		return authn.Binding{}, apierrors.NewConflict(apierrors.GroupResource{Resource: "Pod"}, ref.Name, reason)
	}
	onNode := pod.GetSpec().GetNodeName()
	if isNode && onNode != nodeName {
		return authn.Binding{}, apierrors.NewForbidden(gr, a.Name, "node requested token bound to a pod scheduled on a different node")
	}
	b := authn.Binding{Pod: &authn.ObjectRef{Name: ref.Name, UID: uid}}
	if onNode != "" {
		b.Node = &authn.ObjectRef{Name: onNode}
		if n, err := s.registries["nodes"].Get(ctx, "", onNode); err == nil {
			b.Node.UID = n.GetMetadata().GetUid()
		}
	}
	return b, nil
}
