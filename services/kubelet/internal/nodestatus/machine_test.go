package nodestatus

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCgroupAvailableIsTheLimitLessTheWorkingSet(t *testing.T) {
	root := t.TempDir()
	cgroup := func(name, limit string) string {
		dir := filepath.Join(root, "docker", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for file, content := range map[string]string{
			"memory.limit_in_bytes": limit + "\n",
			"memory.usage_in_bytes": "3000\n",
			"memory.stat":           "cache 2000\ninactive_file 5\ntotal_inactive_file 1200\ntotal_active_file 800\n",
		} {
			if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return "/docker/" + name
	}
	if avail, ok := cgroupAvailable(root, cgroup("limited", "10000")); !ok || avail != 10000-(3000-1200) {
		t.Errorf("limited cgroup: %d %v, want 10000 - (3000 - 1200) = 8200", avail, ok)
	}
	if _, ok := cgroupAvailable(root, cgroup("unlimited", "9223372036854771712")); ok {
		t.Error("a cgroup without a limit has an availability; MemAvailable measures it")
	}
	if _, ok := cgroupAvailable(root, "/absent"); ok {
		t.Error("a cgroup without memory files has an availability")
	}
}
