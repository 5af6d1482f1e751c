package nodestatus

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWorkingSetLeavesOutInactivePageCache(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "docker", "node")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("memory.usage_in_bytes", "3000\n")
	write("memory.stat", "cache 2000\ninactive_file 5\ntotal_inactive_file 1200\ntotal_active_file 800\n")
	if ws, ok := workingSet(root, "/docker/node"); !ok || ws != 1800 {
		t.Errorf("working set %d %v, want 3000-1200 = 1800", ws, ok)
	}
	if _, ok := workingSet(root, "/"); ok {
		t.Error("the root cgroup (the whole machine) has a working set; MemAvailable measures it")
	}
	if _, ok := workingSet(root, "/absent"); ok {
		t.Error("a cgroup without memory files has a working set")
	}
}
