//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func configMap(name string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "default", "labels": map[string]any{"test": "chaos"}},
		"data":     map[string]any{"written": time.Now().Format(time.RFC3339Nano)},
	}
}

// createConfigMap creates one ConfigMap and returns the HTTP status, the
// body and how long the call took.
func createConfigMap(t testing.TB, name string) (int, string, time.Duration) {
	start := time.Now()
	code, b := request(t, http.MethodPost, "/api/v1/namespaces/default/configmaps", configMap(name), nil)
	return code, string(b), time.Since(start)
}

// Killing etcd members: with one down, writes go on; with two down (no
// quorum) they fail fast with 503 and readyz names etcd, while running Pods
// keep serving; with the members back, writes resume and every write that
// was acknowledged is there.
func TestEtcdMemberLoss(t *testing.T) {
	ps, _, _ := birth(t, "chaos", 1)
	defer deleteDeployment(t, "chaos")
	podIP := ps[0].Status.PodIP
	var acked []string
	write := func(name string) (int, string, time.Duration) {
		code, body, took := createConfigMap(t, name)
		if code == http.StatusCreated {
			acked = append(acked, name)
		}
		return code, body, took
	}
	t.Cleanup(func() {
		compose(t, "start", "etcd-2", "etcd-3")
		for _, n := range acked {
			request(t, http.MethodDelete, "/api/v1/namespaces/default/configmaps/"+n, nil, nil)
		}
	})

	mustCompose(t, "kill", "etcd-2")
	for i := 0; i < 20; i++ {
		if code, body, _ := write(fmt.Sprintf("chaos-one-down-%d", i)); code != http.StatusCreated {
			t.Fatalf("create with one member down: %d %s", code, body)
		}
	}

	mustCompose(t, "kill", "etcd-3")
	var code int
	var body string
	var took time.Duration
	eventually(t, 30*time.Second, "writes refused without quorum", func() error {
		code, body, took = write(fmt.Sprintf("chaos-no-quorum-%d", time.Now().UnixNano()))
		if code != http.StatusServiceUnavailable {
			return fmt.Errorf("create answered %d", code)
		}
		return nil
	})
	t.Logf("without quorum: %d after %v: %s", code, took.Round(time.Millisecond), strings.TrimSpace(body))
	if !strings.Contains(body, `"code":503`) {
		t.Errorf("503 without a Status body: %s", body)
	}
	if took > 20*time.Second {
		t.Errorf("a write without quorum took %v to fail: it should not hang", took)
	}
	rc, rb := request(t, http.MethodGet, "/readyz?verbose", nil, nil)
	if rc == http.StatusOK || !strings.Contains(string(rb), "[-]etcd failed") {
		t.Errorf("readyz without quorum: %d %s", rc, rb)
	}
	if out, err := inNode(t, "worker-1", "busybox", "wget", "-q", "-O", "-", "http://"+podIP+":8080/"); err != nil || !strings.Contains(out, ps[0].Metadata.Name) {
		t.Errorf("running pod stopped serving without quorum: %q %v", out, err)
	}

	mustCompose(t, "start", "etcd-2", "etcd-3")
	start := time.Now()
	eventually(t, 2*time.Minute, "writes resume", func() error {
		if code, body, _ := write(fmt.Sprintf("chaos-back-%d", time.Now().UnixNano())); code != http.StatusCreated {
			return fmt.Errorf("%d %s", code, body)
		}
		return nil
	})
	t.Logf("members restarted: writes resumed after %v", time.Since(start).Round(time.Millisecond))
	var l list[struct {
		Metadata meta `json:"metadata"`
	}]
	getJSON(t, "/api/v1/namespaces/default/configmaps?labelSelector=test%3Dchaos", &l)
	have := map[string]bool{}
	for _, cm := range l.Items {
		have[cm.Metadata.Name] = true
	}
	for _, n := range acked {
		if !have[n] {
			t.Errorf("acknowledged write %s lost", n)
		}
	}
	t.Logf("%d acknowledged writes, all present", len(acked))
}
