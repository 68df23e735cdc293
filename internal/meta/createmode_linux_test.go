package meta

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestCreateMode checks which copies are created with their final mode:
// only those whose owner creation already gets right, so that a partial
// copy is never readable by someone who may not read the finished one.
func TestCreateMode(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("skipped: the setgid directory with a foreign group needs root")
	}
	umask, ok := fileio.Umask()
	if !ok || umask&0o022 != 0o022 || umask&^0o022 != 0 {
		t.Skipf("skipped: the cases assume umask 022, have %03o (known %v)", umask, ok)
	}
	plain := t.TempDir()
	setgid := filepath.Join(t.TempDir(), "g")
	if err := os.Mkdir(setgid, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(setgid, 0, 4242); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(setgid, 0o755|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Euid: 0, Root: true, Umask: umask, UmaskKnown: true}
	for _, c := range []struct {
		name     string
		dir      string
		uid, gid uint32
		mode     uint32
		perm     uint32
		want     Born
	}{
		{"root's 0644 file", plain, 0, 0, 0o644, 0o644, Born{Owner: true, Mode: true}},
		{"root's read-only file", plain, 0, 0, 0o444, 0o444, Born{Owner: true, Mode: true}},
		{"a user's 0644 file: chown first", plain, 1000, 1000, 0o644, 0o600, Born{}},
		{"group-writable: the umask would take it", plain, 0, 0, 0o664, 0o600, Born{Owner: true}},
		{"setuid", plain, 0, 0, 0o4755, 0o600, Born{Owner: true}},
		{"the setgid directory's group is not the source's", setgid, 0, 0, 0o644, 0o600, Born{}},
		{"the setgid directory's group is the source's", setgid, 0, 4242, 0o644, 0o644, Born{Owner: true, Mode: true}},
	} {
		d, err := fileio.OpenDir(c.dir)
		if err != nil {
			t.Fatal(err)
		}
		st := fileio.Stat{Uid: c.uid, Gid: c.gid, Mode: fileio.ModeRegular | c.mode}
		perm, b := cfg.CreateMode(d, &st)
		d.Close()
		if perm != c.perm || b != c.want {
			t.Errorf("%s: created %04o with %+v, want %04o with %+v", c.name, perm, b, c.perm, c.want)
		}
	}
}
