package source

import (
	"os"
	"testing"
)

// windowsSymlinkMade skips the test when os.Symlink reported success and
// made nothing at p, as Wine's does.
func windowsSymlinkMade(t *testing.T, p string) {
	t.Helper()
	if st, err := os.Lstat(p); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Skipf("skipping: os.Symlink reported success and made no symlink at %s (Wine makes none)", p)
	}
}
