package test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// deployJSON is a Deployment with two containers, as kubectl apply would
// create it (with the last-applied annotation).
const deployJSON = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q,"labels":{"app":"web"},
 "annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}},
 "spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},
  "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%%","maxUnavailable":"25%%"}},
  "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[
   {"name":"web","image":"registry.podline:5000/demo/web:1.0","ports":[{"containerPort":80,"protocol":"TCP"}],
    "env":[{"name":"A","value":"1"}],"imagePullPolicy":"IfNotPresent","terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"},
   {"name":"side","image":"registry.podline:5000/demo/side:1.0","imagePullPolicy":"IfNotPresent","terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],
   "restartPolicy":"Always","dnsPolicy":"ClusterFirst","terminationGracePeriodSeconds":30,"schedulerName":"default-scheduler"}}}}`

const deploymentsPath = "/apis/apps/v1/namespaces/default/deployments"

// at walks decoded JSON by a dotted path; [n] indexes a list.
func at(v any, path string) any {
	for _, part := range strings.Split(path, ".") {
		name, idx, hasIdx := strings.Cut(part, "[")
		if name != "" {
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[name]
		}
		if hasIdx {
			var i int
			fmt.Sscanf(idx, "%d]", &i)
			l, ok := v.([]any)
			if !ok || i >= len(l) {
				return nil
			}
			v = l[i]
		}
	}
	return v
}

func (c *restClient) mustCreate(path, body string) map[string]any {
	c.t.Helper()
	code, out, _ := c.do("POST", path, "application/json", []byte(body))
	if code != 201 {
		c.t.Fatalf("create: %d %v", code, out)
	}
	return out
}

func (c *restClient) mustGet(path string) map[string]any {
	c.t.Helper()
	code, out, _ := c.do("GET", path, "", nil)
	if code != 200 {
		c.t.Fatalf("get %s: %d %v", path, code, out)
	}
	return out
}

func TestPatchMergeAndJSONPatch(t *testing.T) {
	c, _ := newREST(t)
	c.mustCreate(deploymentsPath, fmt.Sprintf(deployJSON, "web"))
	item := deploymentsPath + "/web"

	code, out, _ := c.do("PATCH", item, "application/merge-patch+json", []byte(`{"metadata":{"labels":{"tier":"front","app":null}}}`))
	if code != 200 || at(out, "metadata.labels.tier") != "front" || at(out, "metadata.labels.app") != nil {
		t.Fatalf("merge patch: %d %v", code, at(out, "metadata.labels"))
	}
	rv := at(out, "metadata.resourceVersion")

	// A failed test op fails the whole patch with 422 and writes nothing.
	code, out, _ = c.do("PATCH", item, "application/json-patch+json",
		[]byte(`[{"op":"replace","path":"/spec/replicas","value":7},{"op":"test","path":"/metadata/labels/tier","value":"back"}]`))
	if code != 422 || out["reason"] != "Invalid" {
		t.Fatalf("failed test op: %d %v", code, out)
	}
	if got := c.mustGet(item); at(got, "metadata.resourceVersion") != rv || at(got, "spec.replicas") != 2.0 {
		t.Fatalf("a failed JSON patch changed the object: %v", at(got, "spec"))
	}
	code, out, _ = c.do("PATCH", item, "application/json-patch+json",
		[]byte(`[{"op":"test","path":"/metadata/labels/tier","value":"front"},{"op":"replace","path":"/spec/replicas","value":3},{"op":"add","path":"/metadata/labels/x","value":"y"}]`))
	if code != 200 || at(out, "spec.replicas") != 3.0 || at(out, "metadata.labels.x") != "y" || at(out, "metadata.generation") != 2.0 {
		t.Fatalf("json patch: %d %v %v", code, at(out, "spec.replicas"), at(out, "metadata"))
	}

	// A patch carrying a stale resourceVersion is a precondition that fails.
	code, out, _ = c.do("PATCH", item, "application/merge-patch+json", []byte(fmt.Sprintf(`{"metadata":{"resourceVersion":%q,"labels":{"z":"1"}}}`, rv)))
	if code != 409 || !strings.Contains(out["message"].(string), "the object has been modified") {
		t.Fatalf("stale rv: %d %v", code, out)
	}
	// The result is validated like an update: an invalid label is 422 with its field.
	code, out, _ = c.do("PATCH", item, "application/merge-patch+json", []byte(`{"metadata":{"labels":{"bad key!":"v"}}}`))
	if code != 422 || !strings.Contains(fmt.Sprint(at(out, "details.causes")), "metadata.labels") {
		t.Fatalf("invalid result: %d %v", code, out)
	}
	// Unknown fields: dropped with a warning by default, 400 under Strict.
	code, out, hdr := c.do("PATCH", item, "application/merge-patch+json", []byte(`{"spec":{"foo":1}}`))
	if code != 200 || at(out, "spec.foo") != nil || !strings.Contains(hdr.Get("Warning"), `unknown field \"spec.foo\"`) {
		t.Fatalf("unknown field, Warn: %d %v %q", code, at(out, "spec"), hdr.Values("Warning"))
	}
	code, out, _ = c.do("PATCH", item+"?fieldValidation=Strict", "application/merge-patch+json", []byte(`{"spec":{"foo":1}}`))
	if code != 400 || !strings.Contains(out["message"].(string), `strict decoding error: unknown field "spec.foo"`) {
		t.Fatalf("unknown field, Strict: %d %v", code, out)
	}
	// Malformed patches are 400; unknown patch types 415; a missing object 404.
	if code, out, _ = c.do("PATCH", item, "application/merge-patch+json", []byte(`{"metadata":`)); code != 400 {
		t.Fatalf("malformed: %d %v", code, out)
	}
	if code, out, _ = c.do("PATCH", item, "application/json-patch+json", []byte(`[{"op":"jump","path":"/a"}]`)); code != 400 {
		t.Fatalf("unknown op: %d %v", code, out)
	}
	if code, out, _ = c.do("PATCH", item, "text/plain", []byte(`{}`)); code != 415 || out["reason"] != "UnsupportedMediaType" {
		t.Fatalf("content type: %d %v", code, out)
	}
	if code, out, _ = c.do("PATCH", deploymentsPath+"/nope", "application/merge-patch+json", []byte(`{}`)); code != 404 {
		t.Fatalf("missing: %d %v", code, out)
	}
}

// TestStrategicMergePatchAsKubectlApplySendsIt sends the patch client-side
// kubectl apply computes when only the image changed.
func TestStrategicMergePatchAsKubectlApplySendsIt(t *testing.T) {
	c, _ := newREST(t)
	c.mustCreate(deploymentsPath, fmt.Sprintf(deployJSON, "web"))
	patch := `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"new\":true}\n"}},
	 "spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"web"},{"name":"side"}],
	  "containers":[{"image":"registry.podline:5000/demo/web:2.0","name":"web","env":[{"name":"B","value":"2"}]}]}}}}`
	code, out, _ := c.do("PATCH", deploymentsPath+"/web", "application/strategic-merge-patch+json", []byte(patch))
	if code != 200 {
		t.Fatalf("strategic patch: %d %v", code, out)
	}
	cs := at(out, "spec.template.spec.containers").([]any)
	if len(cs) != 2 || at(cs[0], "image") != "registry.podline:5000/demo/web:2.0" || at(cs[1], "name") != "side" {
		t.Fatalf("containers: %v", cs)
	}
	if at(cs[0], "ports[0].containerPort") != 80.0 || len(at(cs[0], "env").([]any)) != 2 {
		t.Fatalf("the merge lost fields of the container: %v", cs[0])
	}
	if at(out, "metadata.generation") != 2.0 || !strings.Contains(at(out, "metadata.annotations").(map[string]any)["kubectl.kubernetes.io/last-applied-configuration"].(string), "new") {
		t.Fatalf("metadata: %v", at(out, "metadata"))
	}
	// Deleting one container by its merge key.
	code, out, _ = c.do("PATCH", deploymentsPath+"/web", "application/strategic-merge-patch+json",
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"side","$patch":"delete"}]}}}}`))
	if code != 200 || len(at(out, "spec.template.spec.containers").([]any)) != 1 {
		t.Fatalf("$patch delete: %d %v", code, at(out, "spec.template.spec.containers"))
	}
}

func TestPatchStatusSubresourceChangesOnlyStatus(t *testing.T) {
	c, _ := newREST(t)
	c.mustCreate(deploymentsPath, fmt.Sprintf(deployJSON, "web"))
	code, out, _ := c.do("PATCH", deploymentsPath+"/web/status", "application/merge-patch+json",
		[]byte(`{"spec":{"replicas":9},"status":{"replicas":2,"conditions":[{"type":"Available","status":"True"}]}}`))
	if code != 200 || at(out, "status.replicas") != 2.0 || at(out, "spec.replicas") != 2.0 {
		t.Fatalf("status patch: %d spec=%v status=%v", code, at(out, "spec.replicas"), at(out, "status"))
	}
	code, out, _ = c.do("PATCH", deploymentsPath+"/web/status", "application/strategic-merge-patch+json",
		[]byte(`{"status":{"conditions":[{"type":"Progressing","status":"True"}]}}`))
	if code != 200 || len(at(out, "status.conditions").([]any)) != 2 {
		t.Fatalf("conditions merge by type: %d %v", code, at(out, "status.conditions"))
	}
	// GET of the status subresource is the whole object.
	if got := c.mustGet(deploymentsPath + "/web/status"); got["kind"] != "Deployment" || len(at(got, "status.conditions").([]any)) != 2 {
		t.Fatalf("get status: %v", got)
	}
	// The main resource's patch leaves status alone.
	code, out, _ = c.do("PATCH", deploymentsPath+"/web", "application/merge-patch+json", []byte(`{"status":{"replicas":5}}`))
	if code != 200 || at(out, "status.replicas") != 2.0 {
		t.Fatalf("main patch changed status: %d %v", code, at(out, "status"))
	}
}

func TestServerSideApplyConflictsAndForce(t *testing.T) {
	c, _ := newREST(t)
	applyYAML := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: registry.podline:5000/demo/web:1.0
`
	item := deploymentsPath + "/web"
	code, out, _ := c.do("PATCH", item+"?fieldManager=alice", "application/apply-patch+yaml", []byte(fmt.Sprintf(applyYAML, 2)))
	if code != 201 {
		t.Fatalf("apply create: %d %v", code, out)
	}
	mf := at(out, "metadata.managedFields").([]any)
	if len(mf) != 1 || at(mf[0], "manager") != "alice" || at(mf[0], "operation") != "Apply" || at(mf[0], "fieldsV1.f:spec.f:replicas") == nil {
		t.Fatalf("managedFields after apply: %v", mf)
	}

	code, out, _ = c.do("PATCH", item+"?fieldManager=bob", "application/apply-patch+yaml", []byte(fmt.Sprintf(applyYAML, 5)))
	if code != 409 || out["reason"] != "Conflict" {
		t.Fatalf("conflicting apply: %d %v", code, out)
	}
	if want := `Apply failed with 1 conflict: conflict with "alice" using apps/v1: .spec.replicas`; out["message"] != want {
		t.Fatalf("message %q, want %q", out["message"], want)
	}
	if at(out, "details.causes[0].reason") != "FieldManagerConflict" || at(out, "details.causes[0].field") != ".spec.replicas" {
		t.Fatalf("causes: %v", at(out, "details"))
	}
	if got := c.mustGet(item); at(got, "spec.replicas") != 2.0 {
		t.Fatalf("a conflicting apply wrote: %v", at(got, "spec.replicas"))
	}

	code, out, _ = c.do("PATCH", item+"?fieldManager=bob&force=true", "application/apply-patch+yaml", []byte(fmt.Sprintf(applyYAML, 5)))
	if code != 200 || at(out, "spec.replicas") != 5.0 {
		t.Fatalf("forced apply: %d %v", code, out)
	}
	owners := map[string]bool{}
	for _, e := range at(out, "metadata.managedFields").([]any) {
		owners[at(e, "manager").(string)] = at(e, "fieldsV1.f:spec.f:replicas") != nil
	}
	if !owners["bob"] || owners["alice"] {
		t.Fatalf("replicas should now be bob's alone: %v", owners)
	}
	// An apply configuration may not carry managedFields.
	withMF := strings.Replace(fmt.Sprintf(applyYAML, 5), "  name: web\n", "  name: web\n  managedFields: [{manager: x}]\n", 1)
	if code, out, _ = c.do("PATCH", item+"?fieldManager=bob", "application/apply-patch+yaml", []byte(withMF)); code != 400 || out["message"] != "metadata.managedFields must be nil" {
		t.Fatalf("apply with managedFields: %d %v", code, out)
	}
	// Apply requires a field manager.
	if code, out, _ = c.do("PATCH", item, "application/apply-patch+yaml", []byte(fmt.Sprintf(applyYAML, 5))); code != 400 {
		t.Fatalf("apply without fieldManager: %d %v", code, out)
	}
}

func TestUpdatesRecordTheirFieldManager(t *testing.T) {
	c, _ := newREST(t)
	c.mustCreate(deploymentsPath+"?fieldManager=creator", fmt.Sprintf(deployJSON, "web"))
	code, out, _ := c.do("PATCH", deploymentsPath+"/web", "application/merge-patch+json", []byte(`{"metadata":{"labels":{"tier":"x"}}}`))
	if code != 200 {
		t.Fatalf("patch: %d %v", code, out)
	}
	mf := at(out, "metadata.managedFields").([]any)
	if len(mf) != 2 || at(mf[0], "manager") != "creator" || at(mf[1], "manager") != "Go-http-client" || at(mf[1], "operation") != "Update" {
		t.Fatalf("managedFields: %v", mf)
	}
	if at(mf[1], "fieldsV1.f:metadata.f:labels.f:tier") == nil || at(mf[0], "fieldsV1.f:metadata.f:labels.f:tier") != nil {
		t.Fatalf("the label belongs to its writer: %v", mf)
	}
	// Kubernetes' way to clear managedFields: replace them with one empty entry.
	code, out, _ = c.do("PATCH", deploymentsPath+"/web", "application/json-patch+json",
		[]byte(`[{"op":"replace","path":"/metadata/managedFields","value":[{}]}]`))
	if code != 200 || at(out, "metadata.managedFields") != nil {
		t.Fatalf("reset: %d %v", code, at(out, "metadata.managedFields"))
	}
}

func TestScaleSubresource(t *testing.T) {
	c, _ := newREST(t)
	c.mustCreate(deploymentsPath, fmt.Sprintf(deployJSON, "web"))
	scalePath := deploymentsPath + "/web/scale"
	s := c.mustGet(scalePath)
	if s["apiVersion"] != "autoscaling/v1" || s["kind"] != "Scale" || at(s, "spec.replicas") != 2.0 || at(s, "status.selector") != "app=web" {
		t.Fatalf("scale: %v", s)
	}
	body := fmt.Sprintf(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web","resourceVersion":%q},"spec":{"replicas":3}}`, at(s, "metadata.resourceVersion"))
	code, out, _ := c.do("PUT", scalePath, "application/json", []byte(body))
	if code != 200 || at(out, "spec.replicas") != 3.0 {
		t.Fatalf("put scale: %d %v", code, out)
	}
	if d := c.mustGet(deploymentsPath + "/web"); at(d, "spec.replicas") != 3.0 || at(d, "metadata.generation") != 2.0 {
		t.Fatalf("deployment after scale: %v", at(d, "spec"))
	}
	// The same stale resourceVersion now conflicts.
	if code, out, _ = c.do("PUT", scalePath, "application/json", []byte(body)); code != 409 {
		t.Fatalf("stale scale: %d %v", code, out)
	}
	if code, out, _ = c.do("PATCH", scalePath, "application/merge-patch+json", []byte(`{"spec":{"replicas":5}}`)); code != 200 || at(out, "spec.replicas") != 5.0 {
		t.Fatalf("patch scale: %d %v", code, out)
	}
	code, out, _ = c.do("PATCH", scalePath, "application/merge-patch+json", []byte(`{"spec":{"replicas":-1}}`))
	if code != 422 || at(out, "details.causes[0].field") != "spec.replicas" {
		t.Fatalf("negative replicas: %d %v", code, out)
	}
	if code, _, _ = c.do("GET", "/apis/apps/v1/namespaces/default/deployments/nope/scale", "", nil); code != 404 {
		t.Fatalf("scale of a missing deployment: %d", code)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	c, _ := newREST(t)
	code, out, _ := c.do("POST", deploymentsPath+"?dryRun=All", "application/json", []byte(fmt.Sprintf(deployJSON, "dry")))
	if code != 201 || at(out, "metadata.name") != "dry" || at(out, "metadata.uid") == nil {
		t.Fatalf("dry-run create: %d %v", code, out)
	}
	if code, _, _ = c.do("GET", deploymentsPath+"/dry", "", nil); code != 404 {
		t.Fatalf("dry-run create stored the object: %d", code)
	}
	c.mustCreate(deploymentsPath, fmt.Sprintf(deployJSON, "web"))
	before := c.mustGet(deploymentsPath + "/web")
	code, out, _ = c.do("PATCH", deploymentsPath+"/web?dryRun=All", "application/merge-patch+json", []byte(`{"spec":{"replicas":9}}`))
	if code != 200 || at(out, "spec.replicas") != 9.0 {
		t.Fatalf("dry-run patch: %d %v", code, at(out, "spec"))
	}
	// Dry-run validates: an invalid patch fails the same way.
	if code, _, _ = c.do("PATCH", deploymentsPath+"/web?dryRun=All", "application/merge-patch+json", []byte(`{"spec":{"replicas":-9}}`)); code != 422 {
		t.Fatalf("invalid dry-run patch: %d", code)
	}
	put := strings.Replace(fmt.Sprintf(deployJSON, "web"), `"replicas":2`, `"replicas":8`, 1)
	code, out, _ = c.do("PUT", deploymentsPath+"/web?dryRun=All", "application/json", []byte(put))
	if code != 200 || at(out, "spec.replicas") != 8.0 {
		t.Fatalf("dry-run update: %d %v", code, at(out, "spec"))
	}
	code, out, _ = c.do("PATCH", deploymentsPath+"/web/scale?dryRun=All", "application/merge-patch+json", []byte(`{"spec":{"replicas":4}}`))
	if code != 200 || at(out, "spec.replicas") != 4.0 {
		t.Fatalf("dry-run scale: %d %v", code, out)
	}
	if code, _, _ = c.do("DELETE", deploymentsPath+"/web?dryRun=All", "", nil); code != 200 {
		t.Fatalf("dry-run delete: %d", code)
	}
	// kubectl delete --dry-run=server sends dryRun in the DeleteOptions body.
	code, _, _ = c.do("DELETE", deploymentsPath+"/web", "application/json",
		[]byte(`{"apiVersion":"v1","kind":"DeleteOptions","propagationPolicy":"Background","dryRun":["All"]}`))
	if code != 200 {
		t.Fatalf("dry-run delete with options body: %d", code)
	}
	after := c.mustGet(deploymentsPath + "/web")
	if at(after, "metadata.resourceVersion") != at(before, "metadata.resourceVersion") || at(after, "spec.replicas") != 2.0 {
		t.Fatalf("dry runs changed the object: %v", at(after, "spec.replicas"))
	}
}

func TestDeleteCollectionBySelector(t *testing.T) {
	c, _ := newREST(t)
	for i, app := range []string{"a", "a", "b"} {
		c.mustCreate("/api/v1/namespaces/default/pods", fmt.Sprintf(
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p%d","labels":{"app":%q}},"spec":{"containers":[{"name":"c","image":"registry.podline:5000/demo/web:1.0"}]}}`, i, app))
	}
	code, out, _ := c.do("DELETE", "/api/v1/namespaces/default/pods?labelSelector=app%3Da&dryRun=All", "", nil)
	if code != 200 || len(at(out, "items").([]any)) != 2 || c.podCount() != 3 {
		t.Fatalf("dry-run deletecollection: %d %v, %d left", code, out, c.podCount())
	}
	code, out, _ = c.do("DELETE", "/api/v1/namespaces/default/pods?labelSelector=app%3Da", "", nil)
	if code != 200 || out["kind"] != "PodList" || len(at(out, "items").([]any)) != 2 {
		t.Fatalf("deletecollection: %d %v", code, out)
	}
	if n := c.podCount(); n != 1 {
		t.Fatalf("%d pods left, want 1", n)
	}
	if got := c.mustGet("/api/v1/namespaces/default/pods/p2"); at(got, "metadata.labels.app") != "b" {
		t.Fatalf("the unselected pod: %v", got)
	}
}

func TestPropagationPolicyFromQueryAndBody(t *testing.T) {
	c, _ := newREST(t)
	c.mustCreate(deploymentsPath, fmt.Sprintf(deployJSON, "orphan"))
	c.mustCreate(deploymentsPath, fmt.Sprintf(deployJSON, "fg"))
	code, out, _ := c.do("DELETE", deploymentsPath+"/orphan?propagationPolicy=Orphan", "", nil)
	if code != 200 || fmt.Sprint(at(out, "metadata.finalizers")) != "[orphan]" || at(out, "metadata.deletionTimestamp") == nil {
		t.Fatalf("orphan: %d %v", code, at(out, "metadata"))
	}
	code, out, _ = c.do("DELETE", deploymentsPath+"/fg", "application/json",
		[]byte(`{"apiVersion":"v1","kind":"DeleteOptions","propagationPolicy":"Foreground"}`))
	if code != 200 || fmt.Sprint(at(out, "metadata.finalizers")) != "[foregroundDeletion]" {
		t.Fatalf("foreground: %d %v", code, at(out, "metadata"))
	}
}

// Concurrent patches each apply to the object as it is when written: the
// registry retries a patch whose read went stale, so no label is lost.
func TestConcurrentPatchesAllLand(t *testing.T) {
	c, _ := newREST(t)
	c.mustCreate(deploymentsPath, fmt.Sprintf(deployJSON, "web"))
	const n = 12
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			req, _ := http.NewRequest("PATCH", c.base+deploymentsPath+"/web", strings.NewReader(fmt.Sprintf(`{"metadata":{"labels":{"k%d":"v"}}}`, i)))
			req.Header.Set("Content-Type", "application/strategic-merge-patch+json")
			resp, err := c.http.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != 200 {
					err = fmt.Errorf("patch %d: %s", i, resp.Status)
				}
			}
			errs <- err
		}(i)
	}
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	labels := at(c.mustGet(deploymentsPath+"/web"), "metadata.labels").(map[string]any)
	if len(labels) != n+1 {
		t.Fatalf("%d labels, want %d: %v", len(labels), n+1, labels)
	}
}

// Server-side apply to the status subresource writes status only and
// records the manager's entry with subresource "status".
func TestServerSideApplyToStatus(t *testing.T) {
	c, _ := newREST(t)
	c.mustCreate(deploymentsPath, fmt.Sprintf(deployJSON, "web"))
	body := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":9},"status":{"replicas":2,"readyReplicas":1}}`
	code, out, _ := c.do("PATCH", deploymentsPath+"/web/status?fieldManager=ctrl", "application/apply-patch+yaml", []byte(body))
	if code != 200 || at(out, "status.readyReplicas") != 1.0 || at(out, "spec.replicas") != 2.0 {
		t.Fatalf("status apply: %d spec=%v status=%v", code, at(out, "spec.replicas"), at(out, "status"))
	}
	for _, e := range at(out, "metadata.managedFields").([]any) {
		if at(e, "manager") == "ctrl" {
			if at(e, "subresource") != "status" || at(e, "operation") != "Apply" || at(e, "fieldsV1.f:spec") != nil || at(e, "fieldsV1.f:status.f:readyReplicas") == nil {
				t.Fatalf("ctrl's entry: %v", e)
			}
			return
		}
	}
	t.Fatalf("no entry for ctrl: %v", at(out, "metadata.managedFields"))
}

// A PUT to the status subresource is recorded as the writer's Update entry
// with subresource "status", owning the status fields it changed.
func TestStatusUpdateRecordsItsManager(t *testing.T) {
	c, _ := newREST(t)
	d := c.mustCreate(deploymentsPath, fmt.Sprintf(deployJSON, "web"))
	d["status"] = map[string]any{"replicas": 2, "readyReplicas": 2}
	body, _ := json.Marshal(d)
	code, out, _ := c.do("PUT", deploymentsPath+"/web/status?fieldManager=deployment-controller", "application/json", body)
	if code != 200 {
		t.Fatalf("status update: %d %v", code, out)
	}
	for _, e := range at(out, "metadata.managedFields").([]any) {
		if at(e, "manager") == "deployment-controller" {
			if at(e, "subresource") != "status" || at(e, "operation") != "Update" || at(e, "fieldsV1.f:status.f:readyReplicas") == nil {
				t.Fatalf("entry: %v", e)
			}
			return
		}
	}
	t.Fatalf("no entry for the status writer: %v", at(out, "metadata.managedFields"))
}
