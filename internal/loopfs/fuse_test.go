package loopfs

import (
	"os"
	"testing"
)

// TestFUSEKillRemount mounts each driver, kills it, and mounts again: what
// the tests of a drive that goes away rely on.
func TestFUSEKillRemount(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{ExfatFUSE, NTFS3G, FuseFAT} {
		t.Run(typ, func(t *testing.T) {
			fs := MountFUSE(t, FUSEConfig{Type: typ, Size: 64 << 20})
			if err := os.WriteFile(fs.Path("f"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := fs.DriverPID(); err != nil {
				t.Fatal(err)
			}
			fs.Remount()
			if err := fs.Kill(); err != nil {
				t.Fatal(err)
			}
			// Opening asks the driver (a stat may be answered from the
			// kernel's attribute cache for a while after it died).
			if _, err := os.ReadFile(fs.Path("f")); err == nil {
				t.Fatal("the mount still answers after its driver was killed")
			}
			fs.Remount()
			if b, err := os.ReadFile(fs.Path("f")); err != nil || string(b) != "x" {
				t.Fatalf("after a remount: %q, %v", b, err)
			}
		})
	}
}
