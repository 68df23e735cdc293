package copyengine_test

import (
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestWholeSecondDestRerun: ext4 with 128-byte inodes (the layout of old
// ext3 disks) stores whole seconds. A rerun onto it, with or without the
// hash cache, must find everything up to date and change nothing: no file
// copied or given new times, no directory's metadata set again (each would
// move a ctime).
func TestWholeSecondDestRerun(t *testing.T) {
	t.Parallel()
	vol := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 32 << 20, Mkfs: []string{"-I", "128"}})
	src := filepath.Join(scratchDir(t), "src")
	files := map[string][]byte{
		"a.bin":      pattern(61, 200<<10),
		"b.txt":      []byte("bravo\n"),
		"sub/c.bin":  pattern(62, 70000),
		"sub/deep/d": pattern(63, 5000),
	}
	writeFiles(t, src, files)
	// Nanoseconds in every time, files and directories, deepest first.
	for _, rel := range []string{"a.bin", "b.txt", "sub/c.bin", "sub/deep/d", "sub/deep", "sub", "."} {
		setTimes(t, filepath.Join(src, rel), oldTime)
	}
	settleSources()
	dst := vol.Path("dst")
	opt := copyengine.Options{Sources: []string{src + "/"}, Dest: dst}
	if sum, err := runEngine(t, opt); err != nil || sum.Copied != int64(len(files)) {
		t.Fatalf("first run: %v, copied %d", err, sum.Copied)
	}
	if got := lstatT(t, filepath.Join(dst, "a.bin")).Mtim.Nsec; got != 0 {
		t.Fatalf("a.bin's mtime kept %d ns: this ext4 stores more than whole seconds", got)
	}
	// ctimes are whole seconds here too: let the next one begin, so that a
	// change the reruns make shows.
	time.Sleep(1100 * time.Millisecond)
	before := ctimes(t, dst)
	db := filepath.Join(t.TempDir(), "hashes.db")
	for _, run := range []struct {
		name string
		db   string
	}{{"rerun --no-cache", ""}, {"rerun with a new cache", db}, {"rerun from the cache", db}} {
		var sum copyengine.Summary
		var err error
		if run.db == "" {
			sum, err = runEngine(t, opt)
		} else {
			sum, err = runCached(t, run.db, opt)
		}
		if err != nil {
			t.Fatalf("%s: %v", run.name, err)
		}
		if sum.Copied != 0 || sum.MetaUpdated != 0 || sum.Skipped != int64(len(files)) {
			t.Errorf("%s: copied %d, times or metadata set on %d, skipped %d; want 0, 0, %d",
				run.name, sum.Copied, sum.MetaUpdated, sum.Skipped, len(files))
		}
		after := ctimes(t, dst)
		for p, c := range before {
			if a := after[p]; a != c {
				t.Errorf("%s changed %s (inode %d, ctime %s; was %d, %s)", run.name, p,
					a.ino, time.Unix(0, a.ctime).Format(time.RFC3339Nano), c.ino, time.Unix(0, c.ctime).Format(time.RFC3339Nano))
			}
		}
		if len(after) != len(before) {
			t.Errorf("%s: %d entries in the destination, were %d", run.name, len(after), len(before))
		}
		before = after
	}
}

type inodeCtime struct {
	ino   uint64
	ctime int64
}

// ctimes maps every entry below root (root included) to its inode number
// and ctime.
func ctimes(t *testing.T, root string) map[string]inodeCtime {
	t.Helper()
	out := map[string]inodeCtime{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st := lstatT(t, p)
		out[p] = inodeCtime{st.Ino, st.Ctim.Nano()}
		return nil
	})
	noErr(t, err)
	return out
}
