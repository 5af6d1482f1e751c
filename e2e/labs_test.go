//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// etcdctl is the seed's etcdctl invocation, run inside etcd-1.
func etcdctl(t testing.TB, args ...string) (string, error) {
	t.Helper()
	return compose(t, append([]string{"exec", "-T", "etcd-1", "etcdctl",
		"--endpoints=https://127.0.0.1:2379",
		"--cacert=/etc/kubernetes/pki/etcd/ca.crt",
		"--cert=/etc/kubernetes/pki/etcd/server.crt",
		"--key=/etc/kubernetes/pki/etcd/server.key"}, args...)...)
}

// eventsFor lists the Events of the default namespace about the named
// objects.
func eventsFor(t testing.TB, names map[string]bool) []event {
	t.Helper()
	var l list[event]
	getJSON(t, "/api/v1/namespaces/default/events", &l)
	var out []event
	for _, e := range l.Items {
		if names[e.InvolvedObject.Name] {
			out = append(out, e)
		}
	}
	return out
}

func source(e event) string {
	if e.Source.Component != "" {
		return e.Source.Component
	}
	return e.ReportingComponent
}

// Lab 1: the Events of a 2-replica Deployment come from each component of
// the chain (deployment, replicaset, scheduler, kubelet), the controllers'
// and the scheduler's before the kubelet's, as `kubectl get events -w`
// shows them arriving.
func TestLab1EventOrder(t *testing.T) {
	arrivals := watchEvents(t)
	mustKubectl(t, manifest(t, deployment("lab1", 2)), "apply", "-f", "-")
	defer deleteDeployment(t, "lab1")
	ps := waitRunning(t, "default", "app=lab1", 2, 3*time.Minute)

	var rsName string
	names := map[string]bool{"lab1": true}
	for _, p := range ps {
		names[p.Metadata.Name] = true
		for _, o := range p.Metadata.OwnerReferences {
			if o.Kind == "ReplicaSet" {
				rsName = o.Name
				names[o.Name] = true
			}
		}
	}
	if rsName == "" {
		t.Fatalf("pods have no ReplicaSet owner: %+v", ps)
	}
	// The chain: deployment-controller → replicaset-controller → scheduler →
	// kubelet, per Pod.
	type step struct{ reason, source, object string }
	var want []step
	want = append(want, step{"ScalingReplicaSet", "deployment-controller", "lab1"})
	for _, p := range ps {
		n := p.Metadata.Name
		want = append(want,
			step{"SuccessfulCreate", "replicaset-controller", rsName},
			step{"Scheduled", "default-scheduler", n},
			step{"Pulled", "kubelet", n},
			step{"Created", "kubelet", n},
			step{"Started", "kubelet", n})
	}
	var evs []event
	eventually(t, 30*time.Second, "lab1 events", func() error {
		evs = arrivals.about(names)
		// Writes of different components race to the apiserver; the order
		// things happened is when each was recorded: an Event's name ends
		// in the hex UnixNano of that moment, as Kubernetes names them.
		sort.SliceStable(evs, func(i, j int) bool { return recordedAt(evs[i]) < recordedAt(evs[j]) })
		for _, w := range want {
			if indexOf(evs, w.reason, w.object, 0) < 0 {
				return fmt.Errorf("no %s event for %s", w.reason, w.object)
			}
		}
		return nil
	})
	var seen bytes.Buffer
	for _, e := range evs {
		fmt.Fprintf(&seen, "  %-18s %-22s %s\n", e.Reason, source(e), e.InvolvedObject.Name)
	}
	t.Logf("events in the order recorded:\n%s", seen.String())
	for _, w := range want {
		i := indexOf(evs, w.reason, w.object, 0)
		if got := source(evs[i]); got != w.source {
			t.Errorf("%s for %s from %q, want %q", w.reason, w.object, got, w.source)
		}
	}
	// Each controller records its Event after its write returns, and the
	// next component may already have acted on that write (the scheduler
	// can record Scheduled before the replicaset controller records
	// SuccessfulCreate), as in Kubernetes; so the upstream Events are only
	// required to come before the kubelet's, which come in their own order.
	scaling := indexOf(evs, "ScalingReplicaSet", "lab1", 0)
	create := indexOf(evs, "SuccessfulCreate", rsName, 0)
	for _, p := range ps {
		n := p.Metadata.Name
		var kubelet []int
		if pulling := indexOf(evs, "Pulling", n, 0); pulling >= 0 {
			kubelet = append(kubelet, pulling)
		}
		kubelet = append(kubelet, indexOf(evs, "Pulled", n, 0), indexOf(evs, "Created", n, 0), indexOf(evs, "Started", n, 0))
		if !sort.IntsAreSorted(kubelet) {
			t.Errorf("pod %s: the kubelet's events out of order (positions %v)", n, kubelet)
		}
		for _, up := range []int{scaling, create, indexOf(evs, "Scheduled", n, 0)} {
			if up > kubelet[0] {
				t.Errorf("pod %s: an upstream event (position %d) after the kubelet's first (%d)", n, up, kubelet[0])
			}
		}
	}
}

// recordedAt is the UnixNano in an Event's name ("<object>.<hex>").
func recordedAt(e event) int64 {
	name := e.Metadata.Name
	n, err := strconv.ParseInt(name[strings.LastIndexByte(name, '.')+1:], 16, 64)
	if err != nil {
		return 0
	}
	return n
}

// eventArrivals records Events of the default namespace in the order a
// watch delivers them (ADDED only: an Event's first occurrence).
type eventArrivals struct {
	mu  sync.Mutex
	evs []event
}

func (a *eventArrivals) about(names map[string]bool) []event {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []event
	for _, e := range a.evs {
		if names[e.InvolvedObject.Name] {
			out = append(out, e)
		}
	}
	return out
}

// watchEvents lists the Events of the default namespace and watches from
// that list's resourceVersion until the test ends.
func watchEvents(t *testing.T) *eventArrivals {
	t.Helper()
	var l list[event]
	getJSON(t, "/api/v1/namespaces/default/events", &l)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		apiserverURL+"/api/v1/namespaces/default/events?watch=1&resourceVersion="+l.Metadata.ResourceVersion, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: api.Transport}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch events: %s", resp.Status)
	}
	a := &eventArrivals{}
	go func() {
		defer resp.Body.Close()
		dec := json.NewDecoder(resp.Body)
		for {
			var we struct {
				Type   string `json:"type"`
				Object event  `json:"object"`
			}
			if dec.Decode(&we) != nil {
				return
			}
			if we.Type == "ADDED" {
				a.mu.Lock()
				a.evs = append(a.evs, we.Object)
				a.mu.Unlock()
			}
		}
	}()
	return a
}

func indexOf(evs []event, reason, object string, from int) int {
	for i := from; i < len(evs); i++ {
		if evs[i].Reason == reason && evs[i].InvolvedObject.Name == object {
			return i
		}
	}
	return -1
}

// stopSchedulers stops both schedulers until the test ends.
func stopSchedulers(t *testing.T) {
	mustCompose(t, "stop", "scheduler-1", "scheduler-2")
	t.Cleanup(func() { mustCompose(t, "start", "scheduler-1", "scheduler-2") })
}

func podManifest(name, nodeName string) map[string]any {
	spec := map[string]any{
		"containers": []any{map[string]any{"name": "web", "image": webImage}},
	}
	if nodeName != "" {
		spec["nodeName"] = nodeName
	}
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": "default", "labels": map[string]any{"app": name}},
		"spec":     spec,
	}
}

func deletePod(t testing.TB, name string) {
	t.Helper()
	request(t, http.MethodDelete, "/api/v1/namespaces/default/pods/"+name+"?gracePeriodSeconds=0", nil, nil)
}

// Labs 2 and 3: with the schedulers stopped a new Pod stays Pending with no
// scheduling Events, while a Pod that names its node runs anyway; started
// again, the schedulers place the Pending Pod.
func TestLab2And3SchedulerStopped(t *testing.T) {
	stopSchedulers(t)
	mustKubectl(t, manifest(t, podManifest("lab2", "")), "apply", "-f", "-")
	defer deletePod(t, "lab2")
	mustKubectl(t, manifest(t, podManifest("lab3", "worker-2")), "apply", "-f", "-")
	defer deletePod(t, "lab3")

	// Lab 3: the kubelet of worker-2 runs the Pod without a scheduler.
	p3 := waitRunning(t, "default", "app=lab3", 1, 2*time.Minute)[0]
	if p3.Spec.NodeName != "worker-2" {
		t.Errorf("lab3 on %q", p3.Spec.NodeName)
	}
	// Lab 2: meanwhile lab2 is still Pending, with no scheduler Events.
	p2 := pods(t, "default", "app=lab2")
	if len(p2) != 1 || p2[0].Status.Phase != "Pending" || p2[0].Spec.NodeName != "" {
		t.Fatalf("lab2 with the schedulers stopped: %+v", p2)
	}
	for _, e := range eventsFor(t, map[string]bool{"lab2": true}) {
		if source(e) == "default-scheduler" {
			t.Errorf("scheduler event while stopped: %s %s", e.Reason, e.Message)
		}
	}
	mustCompose(t, "start", "scheduler-1", "scheduler-2")
	start := time.Now()
	waitRunning(t, "default", "app=lab2", 1, 2*time.Minute)
	t.Logf("schedulers started: lab2 Running after %v", time.Since(start).Round(time.Millisecond))
}

// Lab 4: replacing with a saved, stale object is refused with 409 Conflict.
func TestLab4StaleReplaceConflicts(t *testing.T) {
	mustKubectl(t, "", "create", "deployment", "lab4", "--image="+webImage, "--replicas=1")
	defer deleteDeployment(t, "lab4")
	saved := mustKubectl(t, "", "get", "deploy", "lab4", "-o", "yaml")
	file := filepath.Join(t.TempDir(), "lab4.yaml")
	if err := os.WriteFile(file, []byte(saved), 0o644); err != nil {
		t.Fatal(err)
	}
	mustKubectl(t, "", "scale", "deploy", "lab4", "--replicas=2")
	_, err := kubectl(t, "", "replace", "-f", file)
	want := `Operation cannot be fulfilled on deployments.apps "lab4": the object has been modified; please apply your changes to the latest version and try again`
	if err == nil || !strings.Contains(err.Error(), "Error from server (Conflict)") || !strings.Contains(err.Error(), want) {
		t.Fatalf("replace of a stale object: %v\nwant Error from server (Conflict): ... %s", err, want)
	}
}

// Lab 5: etcd holds the Deployment as protobuf (the k8s\0 envelope), not JSON.
func TestLab5EtcdHoldsProtobuf(t *testing.T) {
	mustKubectl(t, "", "create", "deployment", "lab5", "--image="+webImage, "--replicas=0")
	defer deleteDeployment(t, "lab5")
	out, err := etcdctl(t, "get", "/registry/deployments/default/lab5")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(out, "\n", 2)
	if lines[0] != "/registry/deployments/default/lab5" || len(lines) < 2 {
		t.Fatalf("etcdctl get printed %q", out)
	}
	if !strings.HasPrefix(lines[1], "k8s\x00") {
		t.Errorf("value does not start with the k8s\\0 envelope: %q", truncate(lines[1], 40))
	}
	if strings.Contains(lines[1], `"apiVersion"`) {
		t.Errorf("value looks like JSON: %q", truncate(lines[1], 80))
	}
	keys, err := etcdctl(t, "get", "/registry/namespaces/default", "--prefix", "--keys-only")
	if err != nil || !strings.Contains(keys, "/registry/namespaces/default") {
		t.Errorf("the seed's keys-only listing: %q %v", keys, err)
	}
	status, err := etcdctl(t, "endpoint", "status", "-w", "table", "--cluster")
	if err != nil || strings.Count(status, "https://etcd-") != 3 {
		t.Errorf("endpoint status of 3 members: %s %v", status, err)
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
