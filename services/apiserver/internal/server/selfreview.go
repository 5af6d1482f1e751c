package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/field"
	"podline.dev/services/apiserver/internal/audit"
	"podline.dev/services/apiserver/internal/authz"
	"podline.dev/services/apiserver/internal/request"
)

// The self-review APIs kubectl uses to show the chain's view of its user:
// `kubectl auth whoami` (SelfSubjectReview), `kubectl auth can-i`
// (SelfSubjectAccessReview) and `kubectl auth can-i --list`
// (SelfSubjectRulesReview); and SubjectAccessReview, the same question
// about any user, which kubelets ask (their Webhook authorization mode)
// before serving the apiserver or anyone else; and TokenReview
// (tokenreview.go), which kubelets ask who a bearer token is.
const (
	selfSubjectReviewPath       = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
	selfSubjectAccessReviewPath = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
	selfSubjectRulesReviewPath  = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
	subjectAccessReviewPath     = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
)

type objectMeta struct {
	CreationTimestamp *string `json:"creationTimestamp"`
}

// selfSubjectReview is authentication.k8s.io/v1 SelfSubjectReview.
type selfSubjectReview struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   objectMeta `json:"metadata"`
	Status     struct {
		UserInfo userInfo `json:"userInfo"`
	} `json:"status"`
}

type userInfo struct {
	Username string              `json:"username"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

// accessReview is authorization.k8s.io/v1 SelfSubjectAccessReview and
// SubjectAccessReview: the latter's spec also names the user under review.
type accessReview struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   objectMeta `json:"metadata"`
	Spec       struct {
		ResourceAttributes    *resourceAttributes    `json:"resourceAttributes,omitempty"`
		NonResourceAttributes *nonResourceAttributes `json:"nonResourceAttributes,omitempty"`
		User                  string                 `json:"user,omitempty"`
		Groups                []string               `json:"groups,omitempty"`
		Extra                 map[string][]string    `json:"extra,omitempty"`
		UID                   string                 `json:"uid,omitempty"`
	} `json:"spec"`
	Status accessReviewStatus `json:"status"`
}

type resourceAttributes struct {
	Namespace   string `json:"namespace,omitempty"`
	Verb        string `json:"verb,omitempty"`
	Group       string `json:"group,omitempty"`
	Version     string `json:"version,omitempty"`
	Resource    string `json:"resource,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	Name        string `json:"name,omitempty"`
	// FieldSelector narrows a list or watch (the Node authorizer lets a
	// kubelet list only its own pods): requirements when given, else the
	// raw selector, as kube-apiserver reads it.
	FieldSelector *fieldSelectorAttributes `json:"fieldSelector,omitempty"`
}

type fieldSelectorAttributes struct {
	RawSelector  string                     `json:"rawSelector,omitempty"`
	Requirements []fieldSelectorRequirement `json:"requirements,omitempty"`
}

type fieldSelectorRequirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// selector is the field selector as a request states it ("" for none).
// A requirement a field selector cannot state (several values, Exists)
// is left out: the question is then about a wider read, so it can refuse
// more, never allow more.
func (f *fieldSelectorAttributes) selector() string {
	if f == nil {
		return ""
	}
	if len(f.Requirements) == 0 {
		return f.RawSelector
	}
	var terms []string
	for _, r := range f.Requirements {
		switch {
		case r.Operator == "In" && len(r.Values) == 1:
			terms = append(terms, r.Key+"="+r.Values[0])
		case r.Operator == "NotIn" && len(r.Values) == 1:
			terms = append(terms, r.Key+"!="+r.Values[0])
		}
	}
	return strings.Join(terms, ",")
}

type nonResourceAttributes struct {
	Path string `json:"path,omitempty"`
	Verb string `json:"verb,omitempty"`
}

type accessReviewStatus struct {
	Allowed bool   `json:"allowed"`
	Denied  bool   `json:"denied,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// withReviews answers the review APIs when authorization is on. Creating a
// review is itself authorized: system:basic-user grants the self reviews to
// every authenticated user; SubjectAccessReviews and TokenReviews are for
// kubelets (the Node authorizer), system:auth-delegator and administrators.
func (s *Server) withReviews(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var group, resource string
		switch r.URL.Path {
		case selfSubjectReviewPath:
			group, resource = "authentication.k8s.io", "selfsubjectreviews"
		case selfSubjectAccessReviewPath:
			group, resource = "authorization.k8s.io", "selfsubjectaccessreviews"
		case selfSubjectRulesReviewPath:
			group, resource = "authorization.k8s.io", "selfsubjectrulesreviews"
		case subjectAccessReviewPath:
			group, resource = "authorization.k8s.io", "subjectaccessreviews"
		case tokenReviewPath:
			group, resource = "authentication.k8s.io", "tokenreviews"
		}
		if resource == "" || r.Method != http.MethodPost || s.auth == nil || s.auth.authorizer == nil {
			next.ServeHTTP(w, r)
			return
		}
		u, _ := request.UserFrom(r.Context())
		a := authz.Attributes{User: u, Verb: "create", ResourceRequest: true, APIGroup: group, Resource: resource}
		s.answerCreate(w, r, a, func() (any, error) { return s.review(r, a) })
	})
}

// answerCreate serves a create that answers with an object it makes (a
// review, a token): the call is audited as a, and the object goes out as
// JSON with 201, or the error as a Status.
func (s *Server) answerCreate(w http.ResponseWriter, r *http.Request, a authz.Attributes, create func() (any, error)) {
	rec := s.startAudit(r.Context(), a, nil)
	answer, err := create()
	if err != nil {
		se := apierrors.FromError(err)
		rec.Complete(audit.ResponseStatus{Code: int(se.Status().GetCode()), Status: "Failure", Reason: se.Status().GetReason(), Message: se.Status().GetMessage()}, nil)
		writeStatus(w, se)
		return
	}
	rec.Complete(audit.ResponseStatus{Code: http.StatusCreated}, nil)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(answer)
}

func (s *Server) review(r *http.Request, a authz.Attributes) (any, error) {
	if err := s.authorize(r.Context(), a); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 1<<20))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	switch a.Resource {
	case "selfsubjectreviews":
		out := &selfSubjectReview{APIVersion: "authentication.k8s.io/v1", Kind: "SelfSubjectReview"}
		out.Status.UserInfo = userInfo{Username: a.User.Name, UID: a.User.UID, Groups: a.User.Groups, Extra: a.User.Extra}
		return out, nil
	case "selfsubjectrulesreviews":
		return s.rulesReview(a.User, body)
	case "tokenreviews":
		return s.reviewToken(r.Context(), body)
	}
	kind := "SelfSubjectAccessReview"
	if a.Resource == "subjectaccessreviews" {
		kind = "SubjectAccessReview"
	}
	review := &accessReview{}
	if isProtobuf(body) {
		if review, err = accessReviewFromProto(body); err != nil {
			return nil, apierrors.NewBadRequest("the " + kind + " body: " + err.Error())
		}
	} else if err := json.Unmarshal(body, review); err != nil {
		return nil, apierrors.NewBadRequest("the " + kind + " body is not valid JSON: " + err.Error())
	}
	subject := a.User
	if kind == "SubjectAccessReview" {
		spec := review.Spec
		if spec.User == "" && len(spec.Groups) == 0 {
			return nil, apierrors.NewInvalid(apierrors.GroupKind{Group: "authorization.k8s.io", Kind: kind}, "",
				field.ErrorList{field.Invalid(field.NewPath("spec", "user"), spec.User, "at least one of user or group must be specified")})
		}
		subject = &request.User{Name: spec.User, UID: spec.UID, Groups: spec.Groups, Extra: spec.Extra}
	}
	q := authz.Attributes{User: subject}
	switch spec := review.Spec; {
	case spec.ResourceAttributes != nil:
		ra := spec.ResourceAttributes
		q.ResourceRequest, q.Verb, q.APIGroup, q.Resource, q.Subresource, q.Namespace, q.Name = true, ra.Verb, ra.Group, ra.Resource, ra.Subresource, ra.Namespace, ra.Name
		q.FieldSelector = ra.FieldSelector.selector()
	case spec.NonResourceAttributes != nil:
		q.Verb, q.Path = spec.NonResourceAttributes.Verb, spec.NonResourceAttributes.Path
	default:
		return nil, apierrors.NewBadRequest("spec: exactly one of resourceAttributes or nonResourceAttributes must be specified")
	}
	d, reason, err := s.auth.authorizer.Authorize(r.Context(), q)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	review.APIVersion, review.Kind = "authorization.k8s.io/v1", kind
	review.Status = accessReviewStatus{Allowed: d == authz.Allow, Denied: d == authz.Deny, Reason: reason}
	return review, nil
}
