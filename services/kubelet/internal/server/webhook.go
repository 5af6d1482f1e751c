package server

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

// SubjectAccessReviewPath is where the apiserver answers SubjectAccessReviews.
const SubjectAccessReviewPath = "/apis/authorization.k8s.io/v1/subjectaccessreviews"

// webhookTimeout bounds one review.
const webhookTimeout = 10 * time.Second

// SubjectAccessReviews is the kubelet's Webhook authorization mode: each
// decision is a SubjectAccessReview the apiserver answers with its own
// authorizers (RBAC, Node), sent with the kubelet's credentials.
type SubjectAccessReviews struct{ reviews reviewClient }

var _ Authorizer = (*SubjectAccessReviews)(nil)

// NewSubjectAccessReviews asks the apiserver at server (https://host:port)
// over TLS with cfg (the kubelet's client certificate and the cluster CA).
func NewSubjectAccessReviews(server string, cfg *tls.Config) *SubjectAccessReviews {
	return &SubjectAccessReviews{newReviewClient(server, SubjectAccessReviewPath, "subjectaccessreview", cfg)}
}

// reviewClient posts one kind of review to the apiserver and reads its answer.
type reviewClient struct {
	url, what string
	client    *http.Client
}

func newReviewClient(server, path, what string, cfg *tls.Config) reviewClient {
	return reviewClient{
		url:    strings.TrimSuffix(server, "/") + path,
		what:   what,
		client: &http.Client{Timeout: webhookTimeout, Transport: &http.Transport{TLSClientConfig: cfg}},
	}
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
		return fmt.Errorf("%s: %s: %s", c.what, resp.Status, bytes.TrimSpace(data))
	}
	if err := json.Unmarshal(data, answer); err != nil {
		return fmt.Errorf("%s: %w", c.what, err)
	}
	return nil
}

type subjectAccessReview struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Spec       struct {
		User               string   `json:"user"`
		Groups             []string `json:"groups,omitempty"`
		ResourceAttributes struct {
			Verb        string `json:"verb"`
			Resource    string `json:"resource"`
			Subresource string `json:"subresource,omitempty"`
			Name        string `json:"name,omitempty"`
		} `json:"resourceAttributes"`
	} `json:"spec"`
	Status struct {
		Allowed bool   `json:"allowed"`
		Reason  string `json:"reason"`
	} `json:"status"`
}

// Authorize posts a review of a and returns the apiserver's answer.
func (w *SubjectAccessReviews) Authorize(ctx context.Context, a Attributes) (bool, string, error) {
	review := subjectAccessReview{APIVersion: "authorization.k8s.io/v1", Kind: "SubjectAccessReview"}
	review.Spec.User, review.Spec.Groups = a.User.Name, a.User.Groups
	ra := &review.Spec.ResourceAttributes
	ra.Verb, ra.Resource, ra.Subresource, ra.Name = a.Verb, a.Resource, a.Subresource, a.Name
	var answer subjectAccessReview
	if err := w.reviews.post(ctx, review, &answer); err != nil {
		return false, "", err
	}
	return answer.Status.Allowed, answer.Status.Reason, nil
}
