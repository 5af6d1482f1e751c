package main

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
)

// target is what the command line names: a Pod or a Deployment.
type target struct {
	Deployment bool
	Name       string
}

// parseTarget reads "pod/NAME" or "deploy/NAME" (kubectl's spellings of
// the two kinds), or the same as two arguments "pod NAME".
func parseTarget(args []string) (target, error) {
	var kind, name string
	switch len(args) {
	case 1:
		var ok bool
		if kind, name, ok = strings.Cut(args[0], "/"); !ok {
			return target{}, errUsage
		}
	case 2:
		kind, name = args[0], args[1]
	default:
		return target{}, errUsage
	}
	if name == "" {
		return target{}, errUsage
	}
	switch kind {
	case "pod", "pods", "po":
		return target{Name: name}, nil
	case "deploy", "deployment", "deployments", "deployment.apps", "deployments.apps":
		return target{Deployment: true, Name: name}, nil
	}
	return target{}, fmt.Errorf("%w: kind %q is not pod or deploy", errUsage, kind)
}

// pods returns the Pods whose birth to show: the Pod, or the Pods of the
// Deployment's ReplicaSets, oldest first (then by name).
func (c *apiClient) pods(ctx context.Context, ns string, t target) ([]pod, error) {
	if !t.Deployment {
		var p pod
		if err := c.get(ctx, "/api/v1/namespaces/"+ns+"/pods/"+t.Name, nil, &p); err != nil {
			return nil, err
		}
		return []pod{p}, nil
	}
	var d deployment
	if err := c.get(ctx, "/apis/apps/v1/namespaces/"+ns+"/deployments/"+t.Name, nil, &d); err != nil {
		return nil, err
	}
	q := url.Values{}
	if sel := labelSelector(d.Spec.Selector.MatchLabels); sel != "" {
		q.Set("labelSelector", sel)
	}
	var rsList ownedList
	if err := c.get(ctx, "/apis/apps/v1/namespaces/"+ns+"/replicasets", q, &rsList); err != nil {
		return nil, err
	}
	owned := map[string]bool{}
	for _, rs := range rsList.Items {
		if rs.Metadata.controllerUID() == d.Metadata.UID {
			owned[rs.Metadata.UID] = true
		}
	}
	var list podList
	if err := c.get(ctx, "/api/v1/namespaces/"+ns+"/pods", q, &list); err != nil {
		return nil, err
	}
	var out []pod
	for _, p := range list.Items {
		if owned[p.Metadata.controllerUID()] {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: deployment %s/%s has no pods yet", errNoPods, ns, t.Name)
	}
	slices.SortStableFunc(out, func(a, b pod) int {
		if c := a.Metadata.CreationTimestamp.Compare(b.Metadata.CreationTimestamp); c != 0 {
			return c
		}
		return strings.Compare(a.Metadata.Name, b.Metadata.Name)
	})
	return out, nil
}

// labelSelector writes matchLabels as a selector string, keys sorted.
func labelSelector(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + labels[k]
	}
	return strings.Join(parts, ",")
}

// events lists the Events about the Pod named name.
func (c *apiClient) events(ctx context.Context, ns, name string) ([]event, error) {
	var list eventList
	q := url.Values{"fieldSelector": {"involvedObject.name=" + name}}
	if err := c.get(ctx, "/api/v1/namespaces/"+ns+"/events", q, &list); err != nil {
		return nil, err
	}
	return list.Items, nil
}
