package cni

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, dir, name, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

const template = `{"cniVersion":"1.0.0","name":"podline","plugins":[{"type":"bridge","ipam":{"type":"host-local","ranges":[[{"subnet":"${POD_CIDR}"}]]}}]}`

func TestLoadFillsThePodCIDRTemplateOnceKnown(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "10-podline.conflist", template)
	write(t, dir, "99-loopback.conf", `{"cniVersion":"1.0.0","name":"loopback","type":"loopback"}`)
	p := New(WithConfDir(dir))
	if err := p.Status(); !errors.Is(err, ErrNotReady) {
		t.Fatalf("a template without a pod CIDR: %v", err)
	}
	p.SetPodCIDR("10.244.3.0/24")
	list, err := p.load()
	if err != nil {
		t.Fatal(err)
	}
	if list.Name != "podline" || len(list.Plugins) != 1 || !contains(list.Bytes, "10.244.3.0/24") {
		t.Fatalf("loaded %s: %s", list.Name, list.Bytes)
	}
}

func TestLoadTakesTheFirstNetworkThatIsNotLoopbackAndReadsSingleConfs(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "05-lo.conf", `{"cniVersion":"1.0.0","name":"lo-only","type":"loopback"}`)
	write(t, dir, "20-single.conf", `{"cniVersion":"1.0.0","name":"single","type":"bridge"}`)
	write(t, dir, "30-later.conflist", template)
	list, err := New(WithConfDir(dir)).load()
	if err != nil || list.Name != "single" || len(list.Plugins) != 1 {
		t.Fatalf("%v %v", list, err)
	}
}

func TestAnEmptyDirectoryIsNotReady(t *testing.T) {
	if err := New(WithConfDir(t.TempDir())).Status(); !errors.Is(err, ErrNotReady) {
		t.Fatalf("%v", err)
	}
}

func contains(b []byte, s string) bool { return bytes.Contains(b, []byte(s)) }
