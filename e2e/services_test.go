//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

type service struct {
	Metadata meta `json:"metadata"`
	Spec     struct {
		ClusterIP string `json:"clusterIP"`
		Type      string `json:"type"`
		Ports     []struct {
			Port     int `json:"port"`
			NodePort int `json:"nodePort"`
		} `json:"ports"`
	} `json:"spec"`
}

type nodeAddresses struct {
	Metadata meta `json:"metadata"`
	Status   struct {
		Addresses []struct {
			Type    string `json:"type"`
			Address string `json:"address"`
		} `json:"addresses"`
	} `json:"status"`
}

// clientPod runs the demo image as a Pod to send requests from, and
// returns its name once it runs.
func clientPod(t *testing.T, name string) string {
	t.Helper()
	mustKubectl(t, "", "run", name, "--image="+webImage, "--labels=app="+name, "--restart=Never")
	t.Cleanup(func() { kubectl(t, "", "delete", "pod", name, "--wait=false") })
	waitRunning(t, "default", "app="+name, 1, 3*time.Minute)
	return name
}

// fromPod runs `web get -n n url` inside a pod and returns who answered
// each request.
func fromPod(t *testing.T, pod, url string, n int) ([]string, error) {
	t.Helper()
	out, err := kubectl(t, "", "exec", pod, "--", "/bin/web", "get", "-n", strconv.Itoa(n), "-timeout", "5s", url)
	if err != nil {
		return nil, err
	}
	var who []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		// "hello from <pod> at <ip>"
		if f := strings.Fields(line); len(f) == 5 {
			who = append(who, f[2])
		}
	}
	if len(who) != n {
		return who, fmt.Errorf("%d answers of %d: %q", len(who), n, out)
	}
	return who, nil
}

func distinct(names []string) []string {
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	var out []string
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func podNames(ps []pod) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Metadata.Name)
	}
	sort.Strings(out)
	return out
}

// TestServiceTraffic follows issue 16's walk: a Deployment exposed as a
// Service is reached by name, by FQDN, by ClusterIP and on every node's
// NodePort; an empty Service refuses at once; an unready Pod leaves the
// rotation; a headless Service's name lists the Pod IPs.
func TestServiceTraffic(t *testing.T) {
	const name = "svcweb"
	mustKubectl(t, "", "create", "deployment", name, "--image="+webImage, "--replicas=3", "--port=8080")
	t.Cleanup(func() {
		kubectl(t, "", "delete", "service", name, name+"-headless", name+"-np", "--ignore-not-found")
		deleteDeployment(t, name)
	})
	// kubectl create deployment adds no probe: give the Pods one, so
	// readiness can be taken away.
	mustKubectl(t, "", "patch", "deployment", name, "--type=json", "-p",
		`[{"op":"add","path":"/spec/template/spec/containers/0/readinessProbe","value":{"httpGet":{"path":"/healthz","port":8080},"periodSeconds":1,"failureThreshold":1}}]`)
	mustKubectl(t, "", "expose", "deployment", name, "--port=80", "--target-port=8080")
	client := clientPod(t, "svc-client")

	var svc service
	getJSON(t, "/api/v1/namespaces/default/services/"+name, &svc)
	if svc.Spec.ClusterIP == "" || !strings.HasPrefix(svc.Spec.ClusterIP, "10.") {
		t.Fatalf("clusterIP %q, want one of 10.96.0.0/12", svc.Spec.ClusterIP)
	}
	backends := podNames(waitRunning(t, "default", "app="+name, 3, 4*time.Minute))

	reachesAll := func(url string) {
		t.Helper()
		eventually(t, 30*time.Second, url+" reaches all 3 pods", func() error {
			who, err := fromPod(t, client, url, 30)
			if err != nil {
				return err
			}
			if got := distinct(who); strings.Join(got, " ") != strings.Join(backends, " ") {
				return fmt.Errorf("answered by %v, want %v", got, backends)
			}
			return nil
		})
	}
	t.Run("by name, FQDN and ClusterIP", func(t *testing.T) {
		reachesAll("http://" + name + "/")
		reachesAll("http://" + name + ".default.svc.cluster.local/")
		reachesAll("http://" + svc.Spec.ClusterIP + "/")
	})

	t.Run("NodePort on every node", func(t *testing.T) {
		mustKubectl(t, "", "expose", "deployment", name, "--name="+name+"-np", "--type=NodePort", "--port=80", "--target-port=8080")
		var np service
		getJSON(t, "/api/v1/namespaces/default/services/"+name+"-np", &np)
		port := np.Spec.Ports[0].NodePort
		if port < 30000 || port > 32767 {
			t.Fatalf("nodePort %d, want one of 30000-32767", port)
		}
		var nodes list[nodeAddresses]
		getJSON(t, "/api/v1/nodes", &nodes)
		for _, n := range nodes.Items {
			for _, a := range n.Status.Addresses {
				if a.Type != "InternalIP" {
					continue
				}
				url := fmt.Sprintf("http://%s:%d/", a.Address, port)
				// From the host, outside every node: the compose network is
				// this machine's own.
				eventually(t, 30*time.Second, n.Metadata.Name+" NodePort", func() error {
					return hostGet(url)
				})
				// And from a Pod.
				eventually(t, 30*time.Second, n.Metadata.Name+" NodePort from a pod", func() error {
					_, err := fromPod(t, client, url, 3)
					return err
				})
			}
		}
	})

	t.Run("headless Service lists the Pod IPs", func(t *testing.T) {
		mustKubectl(t, "", "expose", "deployment", name, "--name="+name+"-headless", "--cluster-ip=None", "--port=8080")
		var want []string
		for _, p := range pods(t, "default", "app="+name) {
			want = append(want, p.Status.PodIP)
		}
		sort.Strings(want)
		eventually(t, 30*time.Second, "headless DNS", func() error {
			out, err := kubectl(t, "", "exec", client, "--", "/bin/web", "lookup", name+"-headless.default.svc.cluster.local")
			if err != nil {
				return err
			}
			got := strings.Fields(out)
			sort.Strings(got)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				return fmt.Errorf("resolves to %v, want %v", got, want)
			}
			return nil
		})
	})

	t.Run("an unready Pod leaves the rotation and comes back", func(t *testing.T) {
		victim := backends[0]
		mustKubectl(t, "", "exec", victim, "--", "/bin/sh", "-c", "touch /tmp/unready")
		start := time.Now()
		eventually(t, 30*time.Second, victim+" out of rotation", func() error {
			who, err := fromPod(t, client, "http://"+name+"/", 30)
			if err != nil {
				return err
			}
			for _, w := range who {
				if w == victim {
					return fmt.Errorf("%s still answers", victim)
				}
			}
			return nil
		})
		t.Logf("unready pod out of rotation after %s", time.Since(start).Round(10*time.Millisecond))
		if d := time.Since(start); d > 2*time.Second+time.Duration(30)*100*time.Millisecond {
			t.Errorf("left the rotation after %s, want within 2 s (plus the 30 requests' own time)", d)
		}
		mustKubectl(t, "", "exec", victim, "--", "/bin/sh", "-c", "rm /tmp/unready")
		reachesAll("http://" + name + "/")
	})

	t.Run("no endpoints is refused at once", func(t *testing.T) {
		mustKubectl(t, "", "scale", "deployment", name, "--replicas=0")
		eventually(t, 2*time.Minute, "pods gone", func() error {
			if n := len(pods(t, "default", "app="+name)); n > 0 {
				return fmt.Errorf("%d pods left", n)
			}
			return nil
		})
		eventually(t, 30*time.Second, "refused", func() error {
			start := time.Now()
			out, err := kubectl(t, "", "exec", client, "--", "/bin/web", "get", "-timeout", "5s", "http://"+svc.Spec.ClusterIP+"/")
			took := time.Since(start)
			if err == nil {
				return fmt.Errorf("answered: %s", out)
			}
			if !strings.Contains(err.Error(), "refused") {
				return fmt.Errorf("not refused: %v", err)
			}
			// kubectl exec itself takes a fraction of a second; a timeout
			// would take the full 5 s.
			if took > 3*time.Second {
				return fmt.Errorf("refused only after %s", took)
			}
			return nil
		})
	})
}

// hostGet sends one request from the test host.
func hostGet(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(b), "hello from ") {
		return fmt.Errorf("%s: %d %q", url, resp.StatusCode, b)
	}
	return nil
}

// TestKubernetesServiceComesBack deletes default/kubernetes: the apiserver
// puts it back, and its EndpointSlice names the apiserver.
func TestKubernetesServiceComesBack(t *testing.T) {
	var before service
	getJSON(t, "/api/v1/namespaces/default/services/kubernetes", &before)
	if before.Spec.ClusterIP != "10.96.0.1" {
		t.Fatalf("kubernetes clusterIP %q, want 10.96.0.1", before.Spec.ClusterIP)
	}
	mustKubectl(t, "", "delete", "service", "kubernetes")
	eventually(t, 30*time.Second, "kubernetes Service back", func() error {
		var s service
		if err := tryGetJSON(t, "/api/v1/namespaces/default/services/kubernetes", &s); err != nil {
			return err
		}
		if s.Metadata.UID == before.Metadata.UID {
			return fmt.Errorf("still the deleted one")
		}
		return nil
	})
	var slices struct {
		Items []struct {
			Endpoints []struct {
				Addresses []string `json:"addresses"`
			} `json:"endpoints"`
			Ports []struct {
				Port int `json:"port"`
			} `json:"ports"`
		} `json:"items"`
	}
	eventually(t, 30*time.Second, "kubernetes EndpointSlice", func() error {
		if err := tryGetJSON(t, "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dkubernetes", &slices); err != nil {
			return err
		}
		if len(slices.Items) == 0 || len(slices.Items[0].Endpoints) == 0 {
			b, _ := json.Marshal(slices)
			return fmt.Errorf("no endpoints: %s", b)
		}
		return nil
	})
	if p := slices.Items[0].Ports; len(p) != 1 || p[0].Port != 6443 {
		t.Errorf("kubernetes EndpointSlice ports %v, want 6443", p)
	}
}
