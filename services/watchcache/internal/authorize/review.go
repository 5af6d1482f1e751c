package authorize

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// ReviewPath is where the apiserver answers SubjectAccessReviews.
const ReviewPath = "/apis/authorization.k8s.io/v1/subjectaccessreviews"

// Review asks the apiserver at URL (https://apiserver:6443) with a
// SubjectAccessReview, made by Client (TLS with the replica's own client
// certificate, whose user may create SubjectAccessReviews).
type Review struct {
	URL    string
	Client *http.Client
}

var _ Authorizer = (*Review)(nil)

// The authorization.k8s.io/v1 shapes the replica sends and reads.
type (
	accessReview struct {
		APIVersion string       `json:"apiVersion"`
		Kind       string       `json:"kind"`
		Spec       reviewSpec   `json:"spec"`
		Status     reviewStatus `json:"status"`
	}
	reviewSpec struct {
		User                  string                 `json:"user,omitempty"`
		Groups                []string               `json:"groups,omitempty"`
		ResourceAttributes    *resourceAttributes    `json:"resourceAttributes,omitempty"`
		NonResourceAttributes *nonResourceAttributes `json:"nonResourceAttributes,omitempty"`
	}
	resourceAttributes struct {
		Namespace     string    `json:"namespace,omitempty"`
		Verb          string    `json:"verb"`
		Group         string    `json:"group"`
		Resource      string    `json:"resource"`
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

func reviewOf(a Attributes) accessReview {
	r := accessReview{APIVersion: "authorization.k8s.io/v1", Kind: "SubjectAccessReview",
		Spec: reviewSpec{User: a.User, Groups: a.Groups}}
	if a.Resource == "" {
		r.Spec.NonResourceAttributes = &nonResourceAttributes{Path: a.Path, Verb: a.Verb}
		return r
	}
	ra := &resourceAttributes{Namespace: a.Namespace, Verb: a.Verb, Group: a.Group, Resource: a.Resource}
	if a.FieldSelector != "" {
		ra.FieldSelector = &selector{RawSelector: a.FieldSelector}
	}
	if a.LabelSelector != "" {
		ra.LabelSelector = &selector{RawSelector: a.LabelSelector}
	}
	r.Spec.ResourceAttributes = ra
	return r
}

// Authorize implements Authorizer.
func (z *Review) Authorize(ctx context.Context, a Attributes) (Decision, error) {
	body, err := json.Marshal(reviewOf(a))
	if err != nil {
		return Decision{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(z.URL, "/")+ReviewPath, bytes.NewReader(body))
	if err != nil {
		return Decision{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := z.Client.Do(req)
	if err != nil {
		return Decision{}, fmt.Errorf("subjectaccessreview: %w", err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Decision{}, fmt.Errorf("subjectaccessreview: %w", err)
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		var st struct{ Message string }
		_ = json.Unmarshal(out, &st)
		return Decision{}, fmt.Errorf("subjectaccessreview: %s: %s", resp.Status, st.Message)
	}
	var review accessReview
	if err := json.Unmarshal(out, &review); err != nil {
		return Decision{}, fmt.Errorf("subjectaccessreview: %w", err)
	}
	st := review.Status
	if !st.Allowed && st.EvaluationError != "" {
		return Decision{}, fmt.Errorf("subjectaccessreview: %s", st.EvaluationError)
	}
	return Decision{Allowed: st.Allowed && !st.Denied, Reason: st.Reason}, nil
}
