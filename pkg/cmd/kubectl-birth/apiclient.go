package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// apiClient GETs objects from the apiserver's REST API.
type apiClient struct {
	base  string
	token string
	hc    *http.Client
}

func newAPIClient(rc *restConfig) (*apiClient, error) {
	hc, err := rc.httpClient()
	if err != nil {
		return nil, err
	}
	return &apiClient{base: rc.Server, token: rc.Token, hc: hc}, nil
}

// statusError is a Kubernetes Status the apiserver answered with; it
// prints as kubectl prints it.
type statusError struct {
	Code    int    `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func (e *statusError) Error() string {
	return fmt.Sprintf("Error from server (%s): %s", e.Reason, e.Message)
}

// get GETs path with query into out.
func (c *apiClient) get(ctx context.Context, path string, query url.Values, out any) error {
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		st := &statusError{}
		if json.Unmarshal(body, st) != nil || st.Reason == "" {
			return &statusError{Code: resp.StatusCode, Reason: http.StatusText(resp.StatusCode), Message: strings.TrimSpace(string(body))}
		}
		return st
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return nil
}

// objectMeta is the part of metadata the plugin reads.
type objectMeta struct {
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace"`
	UID               string            `json:"uid"`
	CreationTimestamp time.Time         `json:"creationTimestamp"`
	Annotations       map[string]string `json:"annotations"`
	OwnerReferences   []struct {
		UID        string `json:"uid"`
		Controller bool   `json:"controller"`
	} `json:"ownerReferences"`
}

// controllerUID is the uid of m's controlling owner, or "".
func (m objectMeta) controllerUID() string {
	for _, r := range m.OwnerReferences {
		if r.Controller {
			return r.UID
		}
	}
	return ""
}

type pod struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		NodeName string `json:"nodeName"`
	} `json:"spec"`
	Status struct {
		Phase      string `json:"phase"`
		Conditions []struct {
			Type               string    `json:"type"`
			Status             string    `json:"status"`
			LastTransitionTime time.Time `json:"lastTransitionTime"`
		} `json:"conditions"`
	} `json:"status"`
}

// readySince is when the Pod's Ready condition became True (whole seconds,
// as the API stores it).
func (p *pod) readySince() (time.Time, bool) {
	for _, c := range p.Status.Conditions {
		if c.Type == "Ready" && c.Status == "True" && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime, true
		}
	}
	return time.Time{}, false
}

type podList struct {
	Items []pod `json:"items"`
}

type ownedList struct {
	Items []struct {
		Metadata objectMeta `json:"metadata"`
	} `json:"items"`
}

type deployment struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
	} `json:"spec"`
}

type eventList struct {
	Items []event `json:"items"`
}
