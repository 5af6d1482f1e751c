// Package testenv holds what tests across the workspace need of their
// surroundings: the repository's root (where bin/ and the configuration
// files are) and a free loopback port.
package testenv

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// RepoRoot is the directory holding go.work, at or above the working
// directory (a test's package directory).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testenv: no go.work above the working directory")
		}
		dir = parent
	}
}

// FreeAddr is a loopback host:port nothing listened on a moment ago.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
