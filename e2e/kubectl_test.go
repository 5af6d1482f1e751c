//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// kubectlAll runs kubectl and returns stdout and stderr together (-v logs
// go to stderr).
func kubectlAll(t testing.TB, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlBin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Normalisation of kubectl's tables for golden files: names with random
// suffixes, ages, IPs and worker names vary from run to run, and column
// widths with them, so columns are joined with " | ".
var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	// Lease holders first: a group of their uuid such as 439d reads as an age.
	{regexp.MustCompile(`(controller-manager|scheduler)-[12]_[0-9a-f-]+`), "$1-N_<id>"},
	{regexp.MustCompile(`\b([a-z0-9]+(?:-[a-z0-9]+)*?)-[a-z0-9]{8,10}-[a-z0-9]{5}\b`), "$1-<rs>-<id>"},
	{regexp.MustCompile(`\b(kweb)-[a-z0-9]{8,10}\b`), "$1-<rs>"},
	{regexp.MustCompile(`\b\d+(?:\.\d+)?(?:s|m|h|d)(?:\d+(?:s|m|h))?\b`), "<age>"},
	{regexp.MustCompile(`\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b`), "<ip>"},
	{regexp.MustCompile(`\bworker-[12]\b`), "worker-N"},
	{regexp.MustCompile(`\bv\d+\.\d+\.\d+(-[a-z0-9.]+)?\b`), "<version>"},
	{regexp.MustCompile(`\S+ \(<age> ago\)`), "<restarts>"},
}

var columnGap = regexp.MustCompile(`\s{2,}`)

func normalizeTable(out string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		for _, n := range normalizers {
			l = n.re.ReplaceAllString(l, n.with)
		}
		lines = append(lines, columnGap.ReplaceAllString(strings.TrimSpace(l), " | "))
	}
	return strings.Join(lines, "\n") + "\n"
}

// golden compares a normalised kubectl table with testdata/<name>.golden.
func golden(t *testing.T, name, out string) {
	t.Helper()
	got := normalizeTable(out)
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s--- want\n%s--- raw\n%s", name, path, got, want, out)
	}
}

const kwebYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: kweb
spec:
  replicas: 2
  selector:
    matchLabels:
      app: kweb
  template:
    metadata:
      labels:
        app: kweb
    spec:
      containers:
      - name: web
        image: registry.podline:5000/demo/web:%s
        ports:
        - containerPort: 8080
`

// The seed's kubectl session on one Deployment: apply, apply a new image
// (-v=8 shows the requests), every output format, golden tables, and
// kubectl birth.
func TestKubectlDeployment(t *testing.T) {
	file := filepath.Join(t.TempDir(), "deploy.yaml")
	write := func(tag string) {
		if err := os.WriteFile(file, []byte(fmt.Sprintf(kwebYAML, tag)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("1.0")
	if out := mustKubectl(t, "", "apply", "-f", file); strings.TrimSpace(out) != "deployment.apps/kweb created" {
		t.Fatalf("first apply printed %q", out)
	}
	defer deleteDeployment(t, "kweb")
	waitRunning(t, "default", "app=kweb", 2, 3*time.Minute)

	// Client-side apply of a new image: GET, then a strategic merge PATCH.
	write("1.1")
	verbose := kubectlAll(t, "apply", "-f", file, "-v=8")
	// kubectl 1.37 logs requests as `"Request" verb="GET" url="..."` and
	// answers as `"Response" status="200 OK"`.
	for _, want := range []string{
		`"Request" verb="GET" url="https://127.0.0.1:6443/apis/apps/v1/namespaces/default/deployments/kweb"`,
		`"Request" verb="PATCH" url="https://127.0.0.1:6443/apis/apps/v1/namespaces/default/deployments/kweb?`,
		`"Response" status="200 OK"`,
		"deployment.apps/kweb configured",
	} {
		if !strings.Contains(verbose, want) {
			t.Errorf("apply -v=8 output lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("apply -v=8 printed:\n%s", verbose)
	}
	if out := kubectlAll(t, "rollout", "status", "deploy/kweb", "--timeout=3m"); !strings.Contains(out, `deployment "kweb" successfully rolled out`) {
		t.Fatalf("rollout status: %s", out)
	}
	ps := waitRunning(t, "default", "app=kweb", 2, 2*time.Minute)
	images := mustKubectl(t, "", "get", "pods", "-l", "app=kweb", "-o", "jsonpath={.items[*].spec.containers[0].image}")
	if strings.Count(images, "demo/web:1.1") != 2 {
		t.Errorf("after the rollout the pods run %q", images)
	}

	// A Service over the Deployment: the endpoints controller lists both
	// pods' IPs at the targetPort in an Endpoints of the Service's name.
	if out := mustKubectl(t, "", "expose", "deploy/kweb", "--port=80", "--target-port=8080"); strings.TrimSpace(out) != "service/kweb exposed" {
		t.Fatalf("expose printed %q", out)
	}
	defer mustKubectl(t, "", "delete", "service", "kweb", "--ignore-not-found")
	var want []string
	for _, p := range ps {
		want = append(want, p.Status.PodIP+":8080")
	}
	var ep string
	eventually(t, time.Minute, "kubectl get ep kweb lists both pods", func() error {
		var err error
		if ep, err = kubectl(t, "", "get", "ep", "kweb"); err != nil {
			return err
		}
		for _, w := range want {
			if !strings.Contains(ep, w) {
				return fmt.Errorf("no %s in:\n%s", w, ep)
			}
		}
		return nil
	})
	golden(t, "get-ep", ep)

	golden(t, "get-pods-wide", mustKubectl(t, "", "get", "pods", "-l", "app=kweb", "-o", "wide"))
	golden(t, "get-deploy", mustKubectl(t, "", "get", "deploy", "kweb"))
	golden(t, "get-nodes", mustKubectl(t, "", "get", "nodes"))
	golden(t, "get-ns", mustKubectl(t, "", "get", "ns"))
	golden(t, "get-lease", mustKubectl(t, "", "get", "lease", "-n", "kube-system", "kube-scheduler", "kube-controller-manager"))

	y := mustKubectl(t, "", "get", "pods", "-l", "app=kweb", "-o", "yaml")
	if !strings.Contains(y, "kind: List") || strings.Count(y, "\n  kind: Pod\n") != 2 {
		t.Errorf("-o yaml:\n%s", y)
	}
	var l list[pod]
	if err := json.Unmarshal([]byte(mustKubectl(t, "", "get", "pods", "-l", "app=kweb", "-o", "json")), &l); err != nil || len(l.Items) != 2 {
		t.Errorf("-o json: %v, %d items", err, len(l.Items))
	}
	owners := mustKubectl(t, "", "get", "pod", "-l", "app=kweb", "-o", "jsonpath={.items[0].metadata.ownerReferences}")
	if !strings.Contains(owners, `"kind":"ReplicaSet"`) || !strings.Contains(owners, `"controller":true`) {
		t.Errorf("ownerReferences: %s", owners)
	}
	cc := mustKubectl(t, "", "get", "pods", "-l", "app=kweb", "-o",
		"custom-columns=NAME:.metadata.name,RV:.metadata.resourceVersion,NODE:.spec.nodeName,PHASE:.status.phase")
	lines := strings.Split(strings.TrimSpace(cc), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "NAME RV NODE PHASE" {
		t.Fatalf("custom-columns:\n%s", cc)
	}
	for _, p := range ps {
		if !strings.Contains(cc, p.Metadata.Name) {
			t.Errorf("custom-columns lacks %s:\n%s", p.Metadata.Name, cc)
		}
	}

	// kubectl birth: the plugin on PATH draws the Deployment's first Pod,
	// run from the repository as a user runs it, where its default CA for
	// Jaeger's HTTPS (.podline/pki/ca.crt) is.
	eventually(t, time.Minute, "kubectl birth shows every component", func() error {
		// kubectl takes no flags before a plugin's name: KUBECONFIG instead.
		cmd := exec.Command(kubectlBin, "birth", "deploy/kweb", "--jaeger", jaegerURL)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "PATH="+filepath.Join(root, "bin")+":"+os.Getenv("PATH"), "KUBECONFIG="+kubeconfig)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		if !strings.Contains(string(out), "(trace ") {
			return fmt.Errorf("not drawn from the trace:\n%s", out)
		}
		for _, c := range []string{"apiserver", "controller-manager", "scheduler", "kubelet"} {
			if !strings.Contains(string(out), c) {
				return fmt.Errorf("no %s line in:\n%s", c, out)
			}
		}
		return nil
	})
}

// watchLines starts a kubectl watch and returns its lines as they come.
func watchLines(t *testing.T, args ...string) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, kubectlBin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines
}

// The seed's watch: while `kubectl run rv-demo` runs, the Pod is ADDED,
// then MODIFIED with its node set, then Running, its resourceVersion
// rising; then describe, events, logs, exec, explain and delete.
//
// With --output-watch-events kubectl evaluates custom-columns against the
// watch event ({type, object}), so the seed's columns (.metadata.name, ...)
// print <none> — kubectl's behaviour, with Kubernetes as with podline. The
// columns below are the seed's, read through .object, plus the event type.
func TestKubectlRunWatchDescribeLogsExec(t *testing.T) {
	lines := watchLines(t, "get", "pods", "--watch", "--output-watch-events", "-o",
		"custom-columns=EVENT:.type,NAME:.object.metadata.name,RV:.object.metadata.resourceVersion,NODE:.object.spec.nodeName,PHASE:.object.status.phase")
	events := watchLines(t, "get", "events", "-w")
	time.Sleep(time.Second) // both watches established
	if out := mustKubectl(t, "", "run", "rv-demo", "--image="+webImage); strings.TrimSpace(out) != "pod/rv-demo created" {
		t.Fatalf("kubectl run printed %q", out)
	}
	defer mustKubectl(t, "", "delete", "pod", "rv-demo", "--ignore-not-found", "--wait=false")

	var seen []string
	var lastRV int64
	added, bound, running := false, false, false
	deadline := time.After(2 * time.Minute)
	for !running {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("watch ended; saw:\n%s", strings.Join(seen, "\n"))
			}
			f := strings.Fields(l)
			if len(f) != 5 || f[1] != "rv-demo" {
				continue
			}
			seen = append(seen, l)
			rv, _ := strconv.ParseInt(f[2], 10, 64)
			if rv <= lastRV {
				t.Errorf("resourceVersion not rising: %s after %d", f[2], lastRV)
			}
			lastRV = rv
			switch {
			case f[0] == "ADDED":
				added = true
			case f[0] == "MODIFIED" && f[3] != "<none>" && !bound:
				bound = added
			case f[0] == "MODIFIED" && f[4] == "Running":
				running = bound
			}
		case <-deadline:
			t.Fatalf("no ADDED → MODIFIED with node → Running; saw:\n%s", strings.Join(seen, "\n"))
		}
	}
	t.Logf("watch:\n%s", strings.Join(seen, "\n"))

	var evLines []string
	collect := time.After(3 * time.Second)
collecting:
	for {
		select {
		case l := <-events:
			evLines = append(evLines, l)
		case <-collect:
			break collecting
		}
	}
	if len(evLines) == 0 || strings.Join(strings.Fields(evLines[0]), " ") != "LAST SEEN TYPE REASON OBJECT MESSAGE" {
		t.Errorf("get events -w printed:\n%s", strings.Join(evLines, "\n"))
	}
	if !strings.Contains(strings.Join(evLines, "\n"), "pod/rv-demo") {
		t.Errorf("get events -w shows no event of pod/rv-demo:\n%s", strings.Join(evLines, "\n"))
	}

	d := mustKubectl(t, "", "describe", "pod", "rv-demo")
	for _, want := range []string{"Name:", "rv-demo", "Node:", "Events:", "Scheduled", "default-scheduler", "Started"} {
		if !strings.Contains(d, want) {
			t.Errorf("describe lacks %q:\n%s", want, d)
		}
	}

	var p pod
	getJSON(t, "/api/v1/namespaces/default/pods/rv-demo", &p)
	if _, err := inNode(t, p.Spec.NodeName, "busybox", "wget", "-q", "-O", "-", "http://"+p.Status.PodIP+":8080/"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "kubectl logs shows the request", func() error {
		out, err := kubectl(t, "", "logs", "rv-demo")
		if err != nil {
			return err
		}
		if !strings.Contains(out, "GET") && !strings.Contains(out, "path=/") {
			return fmt.Errorf("logs: %q", out)
		}
		return nil
	})
	if out := mustKubectl(t, "", "exec", "rv-demo", "--", "hostname"); strings.TrimSpace(out) != "rv-demo" {
		t.Errorf("exec hostname printed %q", out)
	}
	if _, err := kubectl(t, "", "exec", "rv-demo", "--", "sh", "-c", "exit 3"); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("exec of a failing command: %v", err)
	}
	// The descriptions come from the comments in proto/core/v1/types.proto.
	ex := mustKubectl(t, "", "explain", "pod.spec.containers")
	for _, want := range []string{"KIND:", "Pod", "FIELDS:", "image", "ports", "Container image reference", "Probe of container liveness"} {
		if !strings.Contains(ex, want) {
			t.Errorf("explain lacks %q:\n%s", want, ex)
		}
	}
	if out := mustKubectl(t, "", "delete", "pod", "rv-demo"); !strings.HasPrefix(out, `pod "rv-demo" deleted`) {
		t.Errorf("delete printed %q", out)
	}
}
