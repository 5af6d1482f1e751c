//go:build e2e

package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"podline.dev/pkg/jaegertest"
)

// newTraceparent returns a W3C traceparent for a new sampled trace and its
// trace id.
func newTraceparent() (header, traceID string) {
	var tid [16]byte
	var sid [8]byte
	_, _ = rand.Read(tid[:])
	_, _ = rand.Read(sid[:])
	traceID = hex.EncodeToString(tid[:])
	return "00-" + traceID + "-" + hex.EncodeToString(sid[:]) + "-01", traceID
}

// birth creates a Deployment of n replicas through the REST API with its
// own traceparent, waits until every Pod is Running and Ready, and returns
// the Pods, the trace id and how long the birth took.
func birth(t testing.TB, name string, n int) ([]pod, string, time.Duration) {
	t.Helper()
	tp, traceID := newTraceparent()
	start := time.Now()
	code, b := request(t, http.MethodPost, "/apis/apps/v1/namespaces/default/deployments",
		deployment(name, n), http.Header{"Traceparent": {tp}})
	if code != http.StatusCreated {
		t.Fatalf("create deployment %s: %d %s", name, code, b)
	}
	ps := waitRunning(t, "default", "app="+name, n, 3*time.Minute)
	return ps, traceID, time.Since(start)
}

// TestBirth is the seed's story: one Deployment of 3 replicas becomes 3
// Running Pods on the workers, each with its own IP from its node's pod
// subnet, each answering HTTP from another node, and the whole birth is one
// trace in Jaeger.
func TestBirth(t *testing.T) {
	ps, traceID, took := birth(t, "birth", 3)
	defer deleteDeployment(t, "birth")
	t.Logf("apply -> 3 pods Running in %v", took.Round(time.Millisecond))

	ips := map[string]string{}
	for _, p := range ps {
		if p.Spec.NodeName != "worker-1" && p.Spec.NodeName != "worker-2" {
			t.Errorf("pod %s on %q, want a worker (control-plane is tainted)", p.Metadata.Name, p.Spec.NodeName)
		}
		if other, dup := ips[p.Status.PodIP]; dup {
			t.Errorf("pods %s and %s share IP %s", other, p.Metadata.Name, p.Status.PodIP)
		}
		ips[p.Status.PodIP] = p.Metadata.Name
		var n node
		getJSON(t, "/api/v1/nodes/"+p.Spec.NodeName, &n)
		_, subnet, err := net.ParseCIDR(n.Spec.PodCIDR)
		if err != nil {
			t.Fatalf("node %s podCIDR %q: %v", p.Spec.NodeName, n.Spec.PodCIDR, err)
		}
		if !subnet.Contains(net.ParseIP(p.Status.PodIP)) {
			t.Errorf("pod %s IP %s not in %s's pod CIDR %s", p.Metadata.Name, p.Status.PodIP, p.Spec.NodeName, subnet)
		}
		// From worker-1: pods on worker-2 are reached through the node routes.
		out, err := inNode(t, "worker-1", "busybox", "wget", "-q", "-O", "-", "http://"+p.Status.PodIP+":8080/")
		if err != nil {
			t.Errorf("GET pod %s at %s from worker-1: %v", p.Metadata.Name, p.Status.PodIP, err)
		} else if !strings.Contains(out, p.Metadata.Name) {
			t.Errorf("GET %s answered %q, want pod name %s", p.Status.PodIP, out, p.Metadata.Name)
		}
	}

	checkBirthTrace(t, traceID, len(ps))
}

// Jaeger serves its query API over HTTPS only, with a certificate of the
// cluster CA: plain HTTP gets no data, and a client that trusts only the
// system's roots refuses it. With the cluster CA it lists the services
// whose spans came in, over TLS too: the apiserver's and, through each
// member's relay, etcd's.
func TestTraceQueryServesHTTPSOnly(t *testing.T) {
	plain := "http://" + strings.TrimPrefix(jaegerURL, "https://")
	if resp, err := http.Get(plain + "/api/services"); err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK || strings.Contains(string(body), `"data"`) {
			t.Errorf("plain HTTP answered %s: %s", resp.Status, body)
		}
	}
	if resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(jaegerURL + "/api/services"); err == nil {
		resp.Body.Close()
		t.Errorf("a client without the cluster CA was answered %s", resp.Status)
	} else if !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a client without the cluster CA: %v, want a certificate error", err)
	}
	eventually(t, time.Minute, "Jaeger lists the apiserver and etcd", func() error {
		resp, err := jaeger.Get(jaegerURL + "/api/services")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var services struct {
			Data []string `json:"data"`
		}
		if err := decodeJSON(resp.Body, &services); err != nil {
			return err
		}
		for _, want := range []string{"apiserver", "etcd"} {
			if !slices.Contains(services.Data, want) {
				return fmt.Errorf("services %v lack %s", services.Data, want)
			}
		}
		return nil
	})
}

// checkBirthTrace waits until Jaeger holds the whole birth under one trace
// id: the apiserver's request and etcd transaction, etcd's own spans, the
// deployment and replicaset reconciles, a scheduling cycle per Pod, the
// kubelet's sandbox, create and start per Pod, and (with podline-cri) the
// runtime's CRI calls with CNI ADD under them.
func checkBirthTrace(t testing.TB, traceID string, pods int) {
	t.Helper()
	want := map[string]map[string]int{
		"apiserver":          {},
		"etcd":               {},
		"controller-manager": {"deployment.sync": 1, "replicaset.sync": 1},
		"scheduler":          {"SchedulePod": pods},
		"kubelet": {"SyncPod": pods, "RunPodSandbox": pods,
			"CreateContainer": pods, "StartContainer": pods},
	}
	// The kubelet calls neither containerd nor CNI: podline-cri does, under
	// the kubelet's CRI call. containerd's own CRI plugin sends no spans.
	if envOr("PODLINE_NODE_RUNTIME", "podline") == "podline" {
		want["podline-cri"] = map[string]int{"runtime.v1.RuntimeService/RunPodSandbox": pods, "CNI ADD": pods,
			"runtime.v1.RuntimeService/CreateContainer": pods, "runtime.v1.RuntimeService/StartContainer": pods}
	}
	var got map[string]map[string]int
	eventually(t, 90*time.Second, "birth trace "+traceID+" complete in Jaeger", func() error {
		var err error
		if got, err = jaegertest.Operations(jaeger, jaegerURL, traceID); err != nil {
			return err
		}
		var missing []string
		for svc, ops := range want {
			if len(got[svc]) == 0 {
				missing = append(missing, "service "+svc)
			}
			for op, n := range ops {
				if got[svc][op] < n {
					missing = append(missing, fmt.Sprintf("%s %q ×%d (have %d)", svc, op, n, got[svc][op]))
				}
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			return fmt.Errorf("missing %s", strings.Join(missing, ", "))
		}
		return nil
	})
	var svcs []string
	for svc, ops := range got {
		n := 0
		for _, c := range ops {
			n += c
		}
		svcs = append(svcs, fmt.Sprintf("%s:%d", svc, n))
	}
	sort.Strings(svcs)
	t.Logf("trace %s: spans per service %s", traceID, strings.Join(svcs, " "))
}
