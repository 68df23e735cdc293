//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/internal/treecmp"
	"github.com/fastcopy/fastcopy/internal/treeverify"
)

// The check harness of fastcopy's decisions. For each situation of the
// table: a dry run (-n --json) must count exactly what the real run that
// follows it does, and write nothing; and the real run's result must be
// what rsync -aH gives with the corresponding flags (the oracle), by tree
// comparison, and for --link-dest by which files share an inode with the
// earlier snapshot.
//
// A row is a setup, fastcopy's flags and rsync's. To add a behaviour
// (--delete, --move), add a row: the setup builds the source (w.src) and
// whatever lies beside DEST (under w.side: "dst" is DEST) with the
// helpers below; the harness gives rsync a copy of w.side made with
// cp -a.

// decisionRow is one situation of the table.
type decisionRow struct {
	name  string
	setup func(w *world)
	args  []string // fastcopy's flags (SOURCE and DEST are added)
	// rsync's flags besides -aH (SOURCE/ and DEST/ are added); nil when
	// rsync has no counterpart, and then there is no oracle.
	rsync []string
	// byContent compares the result with the oracle's by content and
	// names only (treeverify): for rows where fastcopy shares data that
	// rsync writes twice (duplicates hard-linked by dedup).
	byContent bool
	// sharesWith, when set, is a directory under w.side (an earlier
	// snapshot) with which each file of DEST must share its inode
	// exactly when the oracle's file shares one with the oracle's
	// counterpart.
	sharesWith string
	// check, when set, checks more of the real run's result.
	check func(t *testing.T, w *world)
}

// counted are the fields of --json that count what a run did: a dry run
// must report the same numbers. (How duplicates are shared, clone or hard
// link, is not among them: a dry run cannot try a clone.)
var counted = []string{"copied", "deduplicated", "hardlinked", "link_dest", "skipped", "metadata_only", "symlinks", "specials", "dirs", "failed"}

var decisionRows = []decisionRow{
	{
		name:  "fresh copy",
		setup: func(w *world) { w.tree() },
		rsync: []string{},
	},
	{
		name:  "rerun",
		setup: func(w *world) { w.tree(); w.copy() },
		rsync: []string{},
	},
	{
		// Same size and mtime, other bytes: the hash cache sees the
		// ctime moved and both sides are read, as rsync -c reads them.
		name: "same size and mtime, changed content",
		setup: func(w *world) {
			w.tree()
			w.copy()
			w.rewrite("dst/a.txt", "AAAAA")
		},
		rsync: []string{"-c"},
	},
	{
		name: "hard links, rerun",
		setup: func(w *world) {
			w.tree()
			w.link("src/a.txt", "src/sub/a-again.txt")
			w.copy()
			w.link("src/b.txt", "src/b-again.txt")
		},
		rsync: []string{},
	},
	{
		name: "duplicates",
		setup: func(w *world) {
			w.tree()
			w.write("src/dup1.bin", strings.Repeat("same bytes ", 500))
			w.write("src/sub/dup2.bin", strings.Repeat("same bytes ", 500))
			w.mtime("src/dup1.bin", old)
			w.mtime("src/sub/dup2.bin", old)
		},
		rsync:     []string{},
		byContent: true,
	},
	{
		// A new file with content DEST holds already (known from the
		// hash cache) shares it.
		name: "duplicate of a file DEST holds",
		setup: func(w *world) {
			w.tree()
			w.write("src/big.bin", strings.Repeat("content DEST has ", 1000))
			w.mtime("src/big.bin", old)
			w.copy()
			w.write("src/sub/big-again.bin", strings.Repeat("content DEST has ", 1000))
			w.mtime("src/sub/big-again.bin", old)
		},
		rsync:     []string{},
		byContent: true,
		check: func(t *testing.T, w *world) {
			if !sameInode(t, w.path("dst/big.bin"), w.path("dst/sub/big-again.bin")) {
				t.Errorf("the new file does not share the content DEST held")
			}
		},
	},
	{
		name: "--checksum",
		setup: func(w *world) {
			w.tree()
			w.copy()
			w.mtime("dst/a.txt", old.Add(time.Hour)) // same bytes, another mtime: times only
			w.write("dst/b.txt", "other")            // same size, other bytes
			w.mtime("dst/b.txt", old.Add(2*time.Hour))
		},
		args:  []string{"--checksum"},
		rsync: []string{"--checksum"},
	},
	{
		name: "--update with a newer DEST file",
		setup: func(w *world) {
			w.tree()
			w.copy()
			w.write("dst/a.txt", "edited in DEST")
			w.mtime("dst/a.txt", old.Add(24*time.Hour))
			w.write("dst/b.txt", "older in DEST")
			w.mtime("dst/b.txt", old.Add(-24*time.Hour))
		},
		args:  []string{"--update"},
		rsync: []string{"--update"},
	},
	{
		name: "--ignore-existing",
		setup: func(w *world) {
			w.tree()
			w.copy()
			w.write("dst/a.txt", "edited in DEST")
			w.chmod("dst/b.txt", 0o600)
			w.write("src/sub/new.txt", "new")
		},
		args:  []string{"--ignore-existing"},
		rsync: []string{"--ignore-existing"},
	},
	{
		name: "--link-dest",
		setup: func(w *world) {
			w.tree()
			w.copyTo("prev")
			w.write("src/a.txt", "changed since the snapshot")
			w.mtime("src/a.txt", old.Add(time.Hour))
			w.write("src/sub/new.txt", "new")
		},
		args:       []string{"--link-dest", "../prev"},
		rsync:      []string{"--link-dest=../prev"},
		sharesWith: "prev",
	},
	{
		name:  "filters",
		setup: func(w *world) { w.tree(); w.write("src/keep.tmp", "kept"); w.write("src/cache/x", "x") },
		args:  []string{"--include", "keep.tmp", "--exclude", "*.tmp", "--exclude", "cache/"},
		rsync: []string{"--include", "keep.tmp", "--exclude", "*.tmp", "--exclude", "cache/"},
	},
}

// old is the mtime the harness gives files, far from now: no hash-cache
// entry of them is racy.
var old = time.Date(2021, 6, 1, 10, 0, 0, 123456789, time.UTC)

func TestDecisions(t *testing.T) {
	for _, row := range decisionRows {
		t.Run(strings.ReplaceAll(row.name, " ", "_"), func(t *testing.T) {
			w := newWorld(t)
			row.setup(w)
			w.oldDirTimes()
			if t.Failed() {
				return
			}
			if row.rsync != nil {
				w.cloneSide()
			}
			before := w.snapshot()
			args := append(append([]string{}, row.args...), w.src, w.dst())
			dry := w.fastcopy(append([]string{"-n"}, args...)...)
			if diffs, err := treecmp.Compare(before, w.side, treecmp.Options{}); err != nil || len(diffs) > 0 {
				t.Errorf("the dry run changed what is beside DEST: %v %s", err, strings.Join(diffs, "\n"))
			}
			real := w.fastcopy(args...)
			for _, k := range counted {
				if dry[k] != real[k] {
					t.Errorf("%s: the dry run says %v, the real run %v", k, dry[k], real[k])
				}
			}
			if row.check != nil {
				row.check(t, w)
			}
			if row.rsync == nil {
				return
			}
			if _, err := exec.LookPath("rsync"); err != nil {
				t.Skipf("no oracle: rsync is not installed (%v); the dry and real runs agreed", err)
			}
			w.rsync(row.rsync)
			w.compareOracle(row)
		})
	}
}

// world is one row's directories: the source, and the side (DEST and what
// lies beside it, such as an earlier snapshot) for fastcopy and, cloned
// with cp -a before the runs, for rsync.
type world struct {
	t      *testing.T
	dir    string
	src    string
	side   string // fastcopy's: DEST is side/dst
	oracle string // rsync's copy of side
	cache  string
}

func newWorld(t *testing.T) *world {
	dir := t.TempDir()
	w := &world{t: t, dir: dir, src: filepath.Join(dir, "src"), side: filepath.Join(dir, "fc"), oracle: filepath.Join(dir, "rs"), cache: filepath.Join(dir, "hashes.db")}
	for _, d := range []string{w.src, w.side} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w *world) dst() string { return filepath.Join(w.side, "dst") }

// path maps "src/..." to the source and anything else to the side.
func (w *world) path(rel string) string {
	if rel == "src" || strings.HasPrefix(rel, "src/") {
		return filepath.Join(w.dir, rel)
	}
	return filepath.Join(w.side, rel)
}

// tree writes a small source tree with old mtimes.
func (w *world) tree() {
	for rel, s := range map[string]string{"src/a.txt": "alpha", "src/b.txt": "bravo", "src/sub/c.txt": "charlie", "src/sub/deep/d.txt": "delta", "src/empty": ""} {
		w.write(rel, s)
		w.mtime(rel, old)
	}
	w.symlink("a.txt", "src/link")
}

// oldDirTimes gives the source's directories old mtimes: rsync leaves
// the time of a directory (or symlink) it makes alone when it is within
// the second the source's is in, which one made just now is. (Symlinks
// get theirs as they are made: neither tool updates the time of a symlink
// whose target is unchanged.)
func (w *world) oldDirTimes() {
	err := filepath.WalkDir(w.src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return lchtimes(p, old)
	})
	if err != nil {
		w.t.Fatal(err)
	}
}

func lchtimes(p string, t time.Time) error {
	ts := []unix.Timespec{unix.NsecToTimespec(t.UnixNano()), unix.NsecToTimespec(t.UnixNano())}
	return unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, unix.AT_SYMLINK_NOFOLLOW)
}

func (w *world) write(rel, content string) {
	p := w.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.t.Fatal(err)
	}
	// Rewritten in place, as an editor that keeps the inode would.
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		w.t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		w.t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		w.t.Fatal(err)
	}
}

// rewrite gives rel other bytes of the same length and puts its mtime back.
func (w *world) rewrite(rel, content string) {
	fi, err := os.Stat(w.path(rel))
	if err != nil {
		w.t.Fatal(err)
	}
	if int64(len(content)) != fi.Size() {
		w.t.Fatalf("rewrite %s: %d bytes, want %d", rel, len(content), fi.Size())
	}
	w.write(rel, content)
	w.mtime(rel, fi.ModTime())
}

func (w *world) mtime(rel string, t time.Time) {
	if err := os.Chtimes(w.path(rel), t, t); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) chmod(rel string, mode os.FileMode) {
	if err := os.Chmod(w.path(rel), mode); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) link(oldRel, newRel string) {
	if err := os.Link(w.path(oldRel), w.path(newRel)); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) symlink(target, rel string) {
	if err := os.Symlink(target, w.path(rel)); err != nil {
		w.t.Fatal(err)
	}
	if err := lchtimes(w.path(rel), old); err != nil {
		w.t.Fatal(err)
	}
}

// copy makes DEST a copy of the source with fastcopy, as an earlier run.
func (w *world) copy() { w.copyTo("dst") }

// copyTo copies the source to the directory rel beside DEST.
func (w *world) copyTo(rel string) {
	w.fastcopy(w.src, filepath.Join(w.side, rel))
	// Past the settle window: a source changed next is not taken for
	// one changed while it was read.
	time.Sleep(60 * time.Millisecond)
}

// fastcopy runs the command line with the row's hash cache and returns
// its --json report; a run that does not exit 0 fails the test.
func (w *world) fastcopy(args ...string) map[string]any {
	w.t.Helper()
	var stdout, stderr bytes.Buffer
	full := append([]string{"--json", "--cache", w.cache}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if code := run(ctx, full, &stdout, &stderr); code != 0 {
		w.t.Fatalf("fastcopy %s: exit %d\n%s%s", strings.Join(full, " "), code, stdout.String(), stderr.String())
	}
	var rep map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		w.t.Fatalf("fastcopy %s: %v\n%s", strings.Join(full, " "), err, stdout.String())
	}
	return rep
}

// cloneSide gives rsync a copy of the side, hard links and times kept.
func (w *world) cloneSide() {
	if out, err := exec.Command("cp", "-a", w.side, w.oracle).CombinedOutput(); err != nil {
		w.t.Fatalf("cp -a: %v\n%s", err, out)
	}
}

// snapshot copies the side with cp -a, to hold the dry run's result
// against.
func (w *world) snapshot() string {
	p := filepath.Join(w.dir, "before")
	if out, err := exec.Command("cp", "-a", w.side, p).CombinedOutput(); err != nil {
		w.t.Fatalf("cp -a: %v\n%s", err, out)
	}
	return p
}

func (w *world) rsync(flags []string) {
	args := append(append([]string{"-aH"}, flags...), w.src+"/", filepath.Join(w.oracle, "dst")+"/")
	if out, err := exec.Command("rsync", args...).CombinedOutput(); err != nil {
		w.t.Fatalf("rsync %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// compareOracle holds fastcopy's DEST against rsync's.
func (w *world) compareOracle(row decisionRow) {
	t := w.t
	got, want := w.dst(), filepath.Join(w.oracle, "dst")
	if row.byContent {
		rep, err := treeverify.CompareTrees(context.Background(), want, got, treeverify.TreeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() {
			t.Errorf("DEST differs from rsync's: %v", rep.Diffs)
		}
	} else {
		diffs, err := treecmp.Compare(want, got, treecmp.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(diffs) > 0 {
			t.Errorf("DEST differs from rsync's (rsync's first):\n%s", strings.Join(diffs, "\n"))

		}
	}
	if row.sharesWith != "" {
		fc := shared(t, got, filepath.Join(w.side, row.sharesWith))
		rs := shared(t, want, filepath.Join(w.oracle, row.sharesWith))
		if strings.Join(fc, " ") != strings.Join(rs, " ") {
			t.Errorf("files sharing an inode with %s: fastcopy %q, rsync %q", row.sharesWith, fc, rs)
		}
		if len(fc) == 0 {
			t.Errorf("no file shares an inode with %s", row.sharesWith)
		}
	}
}

// shared lists the regular files of dst that are the same inode as the
// file at the same path under other.
func shared(t *testing.T, dst, other string) []string {
	var out []string
	err := filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dst, p)
		var a, b syscall.Stat_t
		if syscall.Lstat(p, &a) == nil && syscall.Lstat(filepath.Join(other, rel), &b) == nil && a.Dev == b.Dev && a.Ino == b.Ino {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func sameInode(t *testing.T, a, b string) bool {
	var sa, sb syscall.Stat_t
	if err := syscall.Lstat(a, &sa); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Lstat(b, &sb); err != nil {
		t.Fatal(err)
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino
}
