//go:build linux

package destfs

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// probeRecord is a Recorder that checks each name is recorded before it
// exists, as the record of what runs made must be told.
type probeRecord struct {
	t      *testing.T
	parent string
	ctime  int64           // the parent's change time before the probe
	before map[string]bool // relative path -> recorded as a directory
	gone   map[string]bool
}

// Before fails a name recorded once the parent was changed: the probe
// puts the parent's modification time back, but not its change time.
func (r *probeRecord) Before(dirRel, name string, dir bool) {
	if c := ctimeOf(r.t, r.parent); c != r.ctime {
		r.t.Errorf("%q recorded after the probe changed its directory", name)
	}
	r.before[filepath.Join(dirRel, name)] = dir
}

func ctimeOf(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ctim.Nano()
}

func (r *probeRecord) After(*fileio.Dir, string, string, *fileio.Stat, error) {}

func (r *probeRecord) Gone(rel string) { r.gone[rel] = true }

// TestRenameProbeRecorded: the directory-rename probe names both of its
// directories in the record of what runs made before it makes them, below
// the directory it probes in, and strikes them off once they are gone; a
// power cut in between leaves names the next run can prove its own
// (before, the probe recorded nothing and a cut left
// ".fastcopy-rename-probe-renamed~….fastcopy-tmp" in DEST for good).
func TestRenameProbeRecorded(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := fileio.OpenDir(sub)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if fileio.IsFUSE(d) {
		t.Skip("the temporary directory is on FUSE, where no probe is made")
	}
	rec := &probeRecord{t: t, parent: sub, ctime: ctimeOf(t, sub), before: map[string]bool{}, gone: map[string]bool{}}
	var fi Info
	fi.Start(Config{RootPath: root, Made: rec})
	if !fi.DirRenameKeeps(d, "a/b", func(n string) { t.Errorf("note: %s", n) }) {
		t.Fatal("a local filesystem's directory rename was found not to keep its files")
	}
	if len(rec.before) != 2 {
		t.Fatalf("recorded %v, want the probe's two directories", rec.before)
	}
	for rel, dir := range rec.before {
		if filepath.Dir(rel) != "a/b" || !dir || !IsTempName(filepath.Base(rel)) {
			t.Errorf("recorded %q (directory %v), want a temporary's name below a/b, as a directory", rel, dir)
		}
		if !rec.gone[rel] {
			t.Errorf("%q was not struck off once the probe removed it", rel)
		}
	}
	if names, _ := os.ReadDir(sub); len(names) != 0 {
		t.Errorf("the probe left %v", names)
	}
}
