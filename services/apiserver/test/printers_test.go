package test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// kubectlTableAccept is the Accept header kubectl get sends.
const kubectlTableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

type table struct {
	Kind              string                           `json:"kind"`
	APIVersion        string                           `json:"apiVersion"`
	Metadata          struct{ ResourceVersion string } `json:"metadata"`
	ColumnDefinitions []struct {
		Name     string `json:"name"`
		Priority int    `json:"priority"`
	} `json:"columnDefinitions"`
	Rows []struct {
		Cells  []any          `json:"cells"`
		Object map[string]any `json:"object"`
	} `json:"rows"`
}

func (c *restClient) getTable(path string) (int, table) {
	c.t.Helper()
	req, _ := http.NewRequest("GET", c.base+path, nil)
	req.Header.Set("Accept", kubectlTableAccept)
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var tab table
	if resp.StatusCode == 200 {
		if err := json.Unmarshal(raw, &tab); err != nil {
			c.t.Fatalf("%s: %v in %s", path, err, raw)
		}
	}
	return resp.StatusCode, tab
}

func TestKubectlGetIsAnsweredWithATable(t *testing.T) {
	c, _ := newREST(t)
	for _, name := range []string{"a", "b"} {
		if code, _, _ := c.do("POST", "/api/v1/namespaces/default/pods", "application/json", []byte(fmt.Sprintf(podJSON, name))); code != 201 {
			t.Fatalf("create %s: %d", name, code)
		}
	}
	code, tab := c.getTable("/api/v1/namespaces/default/pods")
	if code != 200 || tab.Kind != "Table" || tab.APIVersion != "meta.k8s.io/v1" || tab.Metadata.ResourceVersion == "" {
		t.Fatalf("list: %d %+v", code, tab)
	}
	var cols []string
	for _, c := range tab.ColumnDefinitions {
		if c.Priority == 0 {
			cols = append(cols, c.Name)
		}
	}
	if fmt.Sprint(cols) != "[Name Ready Status Restarts Age]" || len(tab.ColumnDefinitions) != 9 {
		t.Errorf("pod columns %v (%d in all)", cols, len(tab.ColumnDefinitions))
	}
	if len(tab.Rows) != 2 || tab.Rows[0].Cells[0] != "a" || tab.Rows[0].Cells[1] != "0/1" || tab.Rows[0].Cells[2] != "Pending" {
		t.Fatalf("rows %+v", tab.Rows)
	}
	if tab.Rows[0].Object["kind"] != "PartialObjectMetadata" || tab.Rows[0].Object["metadata"].(map[string]any)["name"] != "a" {
		t.Errorf("default row object %v, want PartialObjectMetadata", tab.Rows[0].Object)
	}

	_, full := c.getTable("/api/v1/namespaces/default/pods?includeObject=Object&labelSelector=")
	if full.Rows[1].Object["kind"] != "Pod" || full.Rows[1].Object["spec"] == nil {
		t.Errorf("includeObject=Object row object %v, want the Pod", full.Rows[1].Object)
	}
	_, none := c.getTable("/api/v1/namespaces/default/pods?includeObject=None")
	if none.Rows[0].Object != nil {
		t.Errorf("includeObject=None row object %v", none.Rows[0].Object)
	}
	if code, one := c.getTable("/api/v1/namespaces/default/pods/b"); code != 200 || len(one.Rows) != 1 || one.Rows[0].Cells[0] != "b" {
		t.Errorf("get: %d %+v", code, one)
	}
	if code, _ := c.getTable("/api/v1/namespaces/default/pods?includeObject=All"); code != 400 {
		t.Errorf("includeObject=All: %d, want 400", code)
	}
	if code, _ := c.getTable("/api/v1/namespaces/default/pods/missing"); code != 404 {
		t.Errorf("missing pod: %d, want 404", code)
	}
	code, ns := c.getTable("/api/v1/namespaces")
	if code != 200 || len(ns.ColumnDefinitions) != 3 || ns.ColumnDefinitions[1].Name != "Status" || len(ns.Rows) < 4 {
		t.Errorf("namespaces: %d %+v", code, ns)
	}
	code, deps := c.getTable("/apis/apps/v1/namespaces/default/deployments")
	if code != 200 || len(deps.ColumnDefinitions) != 8 || deps.ColumnDefinitions[2].Name != "Up-to-date" || len(deps.Rows) != 0 {
		t.Errorf("empty deployments: %d %+v", code, deps)
	}
}

// kubectl get -w prints a row per watch event; only the first event
// carries the column definitions.
func TestKubectlGetWatchStreamsTableRows(t *testing.T) {
	c, _ := newREST(t)
	_, list, _ := c.do("GET", "/api/v1/namespaces/default/pods", "", nil)
	rv := list["metadata"].(map[string]any)["resourceVersion"].(string)
	req, _ := http.NewRequest("GET", c.base+"/api/v1/namespaces/default/pods?watch=1&resourceVersion="+rv, nil)
	req.Header.Set("Accept", kubectlTableAccept)
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("watch: %d", resp.StatusCode)
	}
	if code, _, _ := c.do("POST", "/api/v1/namespaces/default/pods", "application/json", []byte(fmt.Sprintf(podJSON, "w"))); code != 201 {
		t.Fatalf("create: %d", code)
	}
	if code, _, _ := c.do("DELETE", "/api/v1/namespaces/default/pods/w", "", nil); code != 200 {
		t.Fatalf("delete: %d", code)
	}
	sc := bufio.NewScanner(resp.Body)
	for i, want := range []string{"ADDED", "DELETED"} {
		if !sc.Scan() {
			t.Fatalf("stream ended: %v", sc.Err())
		}
		var ev struct {
			Type   string `json:"type"`
			Object table  `json:"object"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if ev.Type != want || ev.Object.Kind != "Table" || len(ev.Object.Rows) != 1 || ev.Object.Rows[0].Cells[0] != "w" {
			t.Fatalf("event %d: %s", i, sc.Text())
		}
		if hasColumns := len(ev.Object.ColumnDefinitions) > 0; hasColumns != (i == 0) {
			t.Errorf("event %d has column definitions: %v", i, hasColumns)
		}
	}
}
