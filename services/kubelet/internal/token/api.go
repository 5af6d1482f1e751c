package token

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// requestTimeout bounds one TokenRequest.
const requestTimeout = 10 * time.Second

// API asks the apiserver's TokenRequest API over HTTPS, as the kubelet
// (system:node:<name>): the Node authorizer lets it ask for the accounts
// of its Pods, and only for tokens bound to a Pod on its node.
type API struct {
	server string
	client *http.Client
}

var _ Requester = (*API)(nil)

// NewAPI asks the apiserver at server (https://host:port) with cfg (the
// kubelet's client certificate and the cluster CA).
func NewAPI(server string, cfg *tls.Config) *API {
	return &API{
		server: strings.TrimSuffix(server, "/"),
		client: &http.Client{Timeout: requestTimeout, Transport: &http.Transport{TLSClientConfig: cfg}},
	}
}

// tokenRequest is authentication.k8s.io/v1 TokenRequest.
type tokenRequest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Spec       struct {
		Audiences         []string `json:"audiences,omitempty"`
		ExpirationSeconds int64    `json:"expirationSeconds"`
		BoundObjectRef    struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Name       string `json:"name"`
			UID        string `json:"uid"`
		} `json:"boundObjectRef"`
	} `json:"spec"`
	Status struct {
		Token               string    `json:"token"`
		ExpirationTimestamp time.Time `json:"expirationTimestamp"`
	} `json:"status"`
}

// RequestToken posts a TokenRequest for r.
func (a *API) RequestToken(ctx context.Context, r Request) (Token, error) {
	tr := tokenRequest{APIVersion: "authentication.k8s.io/v1", Kind: "TokenRequest"}
	tr.Spec.Audiences, tr.Spec.ExpirationSeconds = r.Audiences, r.ExpirationSeconds
	ref := &tr.Spec.BoundObjectRef
	ref.APIVersion, ref.Kind, ref.Name, ref.UID = "v1", "Pod", r.PodName, r.PodUID
	body, err := json.Marshal(tr)
	if err != nil {
		return Token{}, err
	}
	u := fmt.Sprintf("%s/api/v1/namespaces/%s/serviceaccounts/%s/token", a.server, url.PathEscape(r.Namespace), url.PathEscape(r.ServiceAccount))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return Token{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return Token{}, fmt.Errorf("%w: %v", ErrRequest, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Token{}, fmt.Errorf("%w: %v", ErrRequest, err)
	}
	if resp.StatusCode != http.StatusCreated {
		return Token{}, fmt.Errorf("%w: %s: %s", ErrRequest, resp.Status, bytes.TrimSpace(data))
	}
	var answer tokenRequest
	if err := json.Unmarshal(data, &answer); err != nil {
		return Token{}, fmt.Errorf("%w: %v", ErrRequest, err)
	}
	if answer.Status.Token == "" {
		return Token{}, fmt.Errorf("%w: the answer has no token", ErrRequest)
	}
	return Token{Value: answer.Status.Token, Expiration: answer.Status.ExpirationTimestamp, ExpirationSeconds: answer.Spec.ExpirationSeconds}, nil
}
