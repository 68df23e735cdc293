package hashcache

import (
	"os"
	"runtime"
	"testing"
)

// windowsCorruptDir is t.TempDir for a test that gives bbolt files it
// gives up on partway. A panic inside bolt.Open (recovered by openDB)
// leaves the file mapped until the process exits, and Windows removes no
// mapped file: there the directory's removal is tried and, where that
// fails, logged instead of failing the test (the copy moved aside is
// removed by a later run's Open, as removeCorrupt does).
func windowsCorruptDir(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "windows" {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp("", "hashcache-corrupt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Logf("left %s: %v (a file bbolt gave up on stays mapped until the process exits)", dir, err)
		}
	})
	return dir
}

// windowsModes reports whether this system keeps Unix permission bits
// (Windows shows 0666 or 0444 for every file, 0777 for directories); a
// test that checks them logs that it cannot, elsewhere.
func windowsModes(t *testing.T) bool {
	if runtime.GOOS == "windows" {
		t.Log("not checked: Windows keeps no Unix permission bits")
		return false
	}
	return true
}
