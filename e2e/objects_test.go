//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// The fields of Kubernetes objects these tests read, in Kubernetes JSON.

type meta struct {
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace"`
	UID               string            `json:"uid"`
	ResourceVersion   string            `json:"resourceVersion"`
	Labels            map[string]string `json:"labels"`
	Annotations       map[string]string `json:"annotations"`
	CreationTimestamp time.Time         `json:"creationTimestamp"`
	OwnerReferences   []struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"ownerReferences"`
}

type condition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
}

type pod struct {
	Metadata meta `json:"metadata"`
	Spec     struct {
		NodeName string `json:"nodeName"`
	} `json:"spec"`
	Status struct {
		Phase      string      `json:"phase"`
		PodIP      string      `json:"podIP"`
		Conditions []condition `json:"conditions"`
	} `json:"status"`
}

func (p pod) ready() bool {
	for _, c := range p.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

type node struct {
	Metadata meta `json:"metadata"`
	Spec     struct {
		PodCIDR string `json:"podCIDR"`
	} `json:"spec"`
}

type event struct {
	Metadata       meta `json:"metadata"`
	InvolvedObject struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"involvedObject"`
	Reason string `json:"reason"`
	Source struct {
		Component string `json:"component"`
	} `json:"source"`
	ReportingComponent string `json:"reportingComponent"`
	Message            string `json:"message"`
}

type list[T any] struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Items []T `json:"items"`
}

// pods lists the Pods of a namespace matching a label selector.
func pods(t testing.TB, namespace, selector string) []pod {
	t.Helper()
	var l list[pod]
	getJSON(t, "/api/v1/namespaces/"+namespace+"/pods?labelSelector="+url.QueryEscape(selector), &l)
	return l.Items
}

// waitRunning waits until n Pods match the selector and all are Running and
// Ready, and returns them.
func waitRunning(t testing.TB, namespace, selector string, n int, timeout time.Duration) []pod {
	t.Helper()
	var got []pod
	eventually(t, timeout, fmt.Sprintf("%d pods %s Running", n, selector), func() error {
		got = pods(t, namespace, selector)
		running := 0
		for _, p := range got {
			if p.Status.Phase == "Running" && p.ready() {
				running++
			}
		}
		if len(got) != n || running != n {
			return fmt.Errorf("%d pods, %d Running and Ready", len(got), running)
		}
		return nil
	})
	return got
}

// deployment is a Deployment of the demo web image, as JSON-ready maps
// (kubectl apply -f - takes JSON as well as YAML).
func deployment(name string, replicas int) map[string]any {
	labels := map[string]any{"app": name}
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": name, "namespace": "default"},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{
					"containers": []any{map[string]any{
						"name":  "web",
						"image": webImage,
						"ports": []any{map[string]any{"containerPort": 8080}},
						"readinessProbe": map[string]any{
							"httpGet":       map[string]any{"path": "/healthz", "port": 8080},
							"periodSeconds": 1,
						},
					}},
				},
			},
		},
	}
}

func manifest(t testing.TB, obj any) string {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// deleteDeployment removes a Deployment and waits until its Pods are gone.
func deleteDeployment(t testing.TB, name string) {
	t.Helper()
	request(t, http.MethodDelete, "/apis/apps/v1/namespaces/default/deployments/"+name,
		map[string]any{"propagationPolicy": "Foreground"}, nil)
	eventually(t, 2*time.Minute, "pods of "+name+" deleted", func() error {
		if n := len(pods(t, "default", "app="+name)); n > 0 {
			return fmt.Errorf("%d pods left", n)
		}
		return nil
	})
}
