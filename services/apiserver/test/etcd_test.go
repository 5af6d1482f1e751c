package test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// The stored value is Kubernetes' protobuf envelope, and the keys are kube-apiserver's.
func TestEtcdHoldsProtobufAtKubernetesKeys(t *testing.T) {
	ctx := ctxFor(t)
	s, pods := startServer(t)
	if _, err := pods.Create(ctx, pod("web", nil)); err != nil {
		t.Fatal(err)
	}
	resp, err := s.Etcd.Client.Get(ctx, "/registry/pods/default/web")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("get: %v %v", resp, err)
	}
	v := resp.Kvs[0].Value
	if !bytes.HasPrefix(v, []byte("k8s\x00")) || !bytes.Contains(v, []byte("Pod")) || bytes.HasPrefix(v[4:], []byte("{")) {
		t.Fatalf("value is not the protobuf envelope: %q", v[:min(len(v), 40)])
	}
	keys, err := s.Etcd.Client.Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, kv := range keys.Kvs {
		got = append(got, string(kv.Key))
	}
	for _, want := range []string{"/registry/namespaces/default", "/registry/namespaces/kube-system", "/registry/pods/default/web"} {
		if !strings.Contains(strings.Join(got, "\n"), want) {
			t.Errorf("no key %s in %v", want, got)
		}
	}

	// With etcdctl built (make bin/etcdctl), the seed's command shows the same.
	_, file, _, _ := runtime.Caller(0)
	etcdctl := filepath.Join(filepath.Dir(file), "..", "..", "..", "bin", "etcdctl")
	if _, err := os.Stat(etcdctl); err != nil {
		t.Skipf("etcdctl not built (%s); the Go client check above passed", etcdctl)
	}
	out, err := exec.CommandContext(ctx, etcdctl, "--endpoints", s.Etcd.Endpoint, "get", "/registry/pods/default/web").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte("/registry/pods/default/web\nk8s\x00")) {
		t.Fatalf("etcdctl get printed %q", out[:min(len(out), 80)])
	}
	out, err = exec.CommandContext(ctx, etcdctl, "--endpoints", s.Etcd.Endpoint, "get", "/registry/", "--prefix", "--keys-only").Output()
	if err != nil || !bytes.Contains(out, []byte("/registry/pods/default/web")) {
		t.Fatalf("etcdctl keys: %q %v", out, err)
	}
}
