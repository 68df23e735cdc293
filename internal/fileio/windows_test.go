package fileio_test

import (
	"runtime"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestWindowsVolumeIdentity: the volume of a directory has an identity
// (on Windows, its serial number and filesystem), the same for two
// directories on it, and Dev as Stat reports it for files there.
func TestWindowsVolumeIdentity(t *testing.T) {
	if runtime.GOOS != "windows" {
		t.Skip("skipping: the Linux identity is tested in volume_test.go")
	}
	a, b := t.TempDir(), t.TempDir()
	va, err := fileio.IdentifyVolume(a)
	if err != nil {
		t.Fatal(err)
	}
	if va.ID == "" {
		t.Fatalf("no identity for %s: %s", a, va.Why)
	}
	vb, err := fileio.IdentifyVolume(b)
	if err != nil || vb != va {
		t.Errorf("%s: %+v, %v; want %+v, as %s", b, vb, err, va, a)
	}
	d, err := fileio.OpenDir(a)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	st, err := d.Stat()
	if err != nil || st.Dev != va.Dev {
		t.Errorf("Stat: Dev %d, %v; want the volume's %d", st.Dev, err, va.Dev)
	}
	t.Logf("%s: %s", a, va.ID)
}
