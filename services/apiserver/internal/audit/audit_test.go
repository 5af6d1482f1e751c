package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/authz"
	"podline.dev/services/apiserver/internal/request"
)

const policyYAML = `
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  users: ["system:kube-scheduler"]
  verbs: ["watch"]
- level: None
  nonResourceURLs: ["/healthz*", "/readyz", "/livez"]
- level: Metadata
  resources:
  - group: ""
    resources: ["secrets", "configmaps"]
- level: RequestResponse
  userGroups: ["auditors"]
- level: Request
  resources:
  - group: ""
    resources: ["pods", "pods/*"]
  - group: apps
  namespaces: ["default"]
- level: Metadata
  omitStages: [ResponseStarted]
`

func TestPolicyLevels(t *testing.T) {
	p, err := ParsePolicy([]byte(policyYAML))
	if err != nil {
		t.Fatal(err)
	}
	sched := &request.User{Name: "system:kube-scheduler"}
	alice := &request.User{Name: "alice", Groups: []string{"devs"}}
	auditor := &request.User{Name: "eve", Groups: []string{"auditors"}}
	res := func(u *request.User, verb, group, resource, sub, ns string) authz.Attributes {
		return authz.Attributes{User: u, Verb: verb, ResourceRequest: true, APIGroup: group, Resource: resource, Subresource: sub, Namespace: ns}
	}
	tests := []struct {
		name string
		a    authz.Attributes
		want Level
	}{
		{"scheduler's watches are not logged", res(sched, "watch", "", "pods", "", ""), LevelNone},
		{"scheduler's binds are", res(sched, "create", "", "pods", "binding", "default"), LevelRequest},
		{"health probes are not logged", authz.Attributes{User: alice, Verb: "get", Path: "/healthz/etcd"}, LevelNone},
		{"secrets at metadata only, before any broader rule", res(auditor, "get", "", "secrets", "", "default"), LevelMetadata},
		{"group rule", res(auditor, "list", "", "nodes", "", ""), LevelRequestResponse},
		{"pod subresource with pods/*", res(alice, "update", "", "pods", "status", "default"), LevelRequest},
		{"whole group by an empty resource list", res(alice, "create", "apps", "deployments", "", "default"), LevelRequest},
		{"namespace outside the rule falls through", res(alice, "create", "apps", "deployments", "", "prod"), LevelMetadata},
		{"non-resource request reaches the catch-all", authz.Attributes{User: alice, Verb: "get", Path: "/apis"}, LevelMetadata},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := p.LevelFor(tt.a); got != tt.want {
				t.Fatalf("LevelFor = %s, want %s", got, tt.want)
			}
		})
	}
	_, omit := p.LevelFor(res(alice, "watch", "", "nodes", "", ""))
	if len(omit) != 2 {
		t.Fatalf("omitted stages = %v, want the policy's and the rule's", omit)
	}
}

func TestParsePolicyErrors(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown level":          "rules:\n- level: Everything\n",
		"unknown field":          "rules:\n- level: None\n  user: [x]\n",
		"urls with resources":    "rules:\n- level: None\n  nonResourceURLs: [/x]\n  resources: [{group: \"\"}]\n",
		"another kind of object": "kind: ConfigMap\nrules: []\n",
	} {
		if _, err := ParsePolicy([]byte(doc)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestLoggerWritesStages(t *testing.T) {
	var buf bytes.Buffer
	p := &Policy{Rules: []Rule{{Level: LevelRequest}}}
	l := NewLogger(&buf, p)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l.now = func() time.Time { now = now.Add(time.Millisecond); return now }
	a := authz.Attributes{User: &request.User{Name: "alice", Groups: []string{"devs"}}, Verb: "create", ResourceRequest: true, Resource: "pods", Namespace: "default"}
	req := &corev1.PodWriteRequest{Namespace: "default", Object: &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: "web"}}}
	rec := l.Start(context.Background(), a, Meta{URI: "/api/v1/namespaces/default/pods", SourceIP: "10.0.0.1"}, req)
	rec.Complete(ResponseStatus{Code: 403, Status: "Failure", Reason: "Forbidden"}, nil)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines: %s", len(lines), buf.String())
	}
	var first, last Event
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &last); err != nil {
		t.Fatal(err)
	}
	if first.Stage != StageRequestReceived || last.Stage != StageResponseComplete || first.AuditID != last.AuditID {
		t.Fatalf("stages %s, %s; ids %s, %s", first.Stage, last.Stage, first.AuditID, last.AuditID)
	}
	if !strings.Contains(string(first.RequestObject), `"name":"web"`) || last.RequestObject != nil {
		t.Fatalf("request object: %s / %s", first.RequestObject, last.RequestObject)
	}
	if last.User.Username != "alice" || last.Verb != "create" || last.ObjectRef.Resource != "pods" ||
		last.ObjectRef.Namespace != "default" || last.ObjectRef.Name != "web" || last.ResponseStatus.Code != 403 || last.Latency != "2ms" {
		t.Fatalf("event %+v", last)
	}
	// None logs nothing; a nil record is safe to use.
	buf.Reset()
	none := NewLogger(&buf, &Policy{})
	r := none.Start(context.Background(), a, Meta{}, nil)
	r.Started(200)
	r.Complete(ResponseStatus{Code: 200}, nil)
	if buf.Len() != 0 || r != nil {
		t.Fatalf("level None wrote %q", buf.String())
	}
}

func TestLoggerNamesTheImpersonator(t *testing.T) {
	var buf bytes.Buffer
	l := NewLogger(&buf, MetadataPolicy())
	a := authz.Attributes{User: &request.User{Name: "alice"}, Verb: "get", ResourceRequest: true, Resource: "pods", Namespace: "default", Name: "web"}
	l.Start(context.Background(), a, Meta{Impersonator: &request.User{Name: "kubernetes-admin", Groups: []string{"system:masters"}}}, nil).
		Complete(ResponseStatus{Code: 200}, nil)
	var ev Event
	if err := json.Unmarshal([]byte(strings.Split(buf.String(), "\n")[1]), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.User.Username != "kubernetes-admin" || ev.ImpersonatedUser == nil || ev.ImpersonatedUser.Username != "alice" {
		t.Fatalf("user %+v, impersonated %+v", ev.User, ev.ImpersonatedUser)
	}
}

// With --audit-log-maxsize the file is rotated at that size and only
// --audit-log-maxbackup rotated files are kept; every file holds whole
// JSON lines. Without it the one file grows.
func TestOpenRotatesAtMaxSize(t *testing.T) {
	write := func(t *testing.T, rot Rotation) (dir string, files []string) {
		dir = t.TempDir()
		l, closer, err := Open(filepath.Join(dir, "audit.log"), &Policy{Rules: []Rule{{Level: LevelRequest}}}, rot)
		if err != nil {
			t.Fatal(err)
		}
		// About 3.5 MB of events: pods with a 1 KiB annotation each.
		a := authz.Attributes{User: &request.User{Name: "alice"}, Verb: "create", ResourceRequest: true, Resource: "pods", Namespace: "default"}
		req := &corev1.PodWriteRequest{Namespace: "default", Object: &corev1.Pod{Metadata: &metav1.ObjectMeta{
			Name: "web", Annotations: map[string]string{"note": strings.Repeat("x", 1024)}}}}
		for range 3000 {
			l.Start(context.Background(), a, Meta{}, req).Complete(ResponseStatus{Code: 201}, nil)
		}
		if err := closer.Close(); err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			files = append(files, e.Name())
		}
		return dir, files
	}
	dir, files := write(t, Rotation{MaxSizeMB: 1, MaxBackups: 2})
	if len(files) != 3 || !slices.Contains(files, "audit.log") {
		t.Fatalf("files %q, want audit.log and 2 rotated ones", files)
	}
	for _, name := range files {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if info.Size() > 1<<20 {
			t.Errorf("%s is %d bytes, over 1 MiB", name, info.Size())
		}
		b, _ := os.ReadFile(filepath.Join(dir, name))
		for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			var ev Event
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatalf("%s line %d: %v", name, i+1, err)
			}
		}
	}
	if _, files := write(t, Rotation{}); len(files) != 1 {
		t.Fatalf("without a max size: files %q", files)
	}
}
