package testenv

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

func TestRepoRootHoldsGoWork(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "pkg", "testenv", "testenv.go")); err != nil {
		t.Errorf("%s is not this repository's root: %v", root, err)
	}
}

func TestFreeAddrCanBeListenedOn(t *testing.T) {
	addr := FreeAddr(t)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
}
