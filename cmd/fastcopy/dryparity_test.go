//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/internal/loopfs"
	"github.com/fastcopy/fastcopy/internal/treecmp"
)

// The dry run's parity with the real run: over the workflow trees, a
// dry run (-n -v --json) must say what the real run that follows it on
// the same tree then says, every field of --json and every line of -v,
// except for the words that say "would" (a -v action "would-X" is the
// real run's "X"; --json's would_delete is the real run's deleted) and
// the timings. TestDecisions holds the counts of its table equal; this
// holds the whole report equal.

// dryparityRow is one tree and the flags both runs get.
type dryparityRow struct {
	name  string
	setup func(w *world)
	args  []string
	// sideArgs are flags whose value is a path under w.side, given
	// absolute (the run's working directory is the package's).
	sideArgs [][2]string
	// more, when set, gives more flags, made after setup (a mount).
	more func(t *testing.T, w *world) []string
	// dest, when set, gives DEST instead of w.dst().
	dest func(t *testing.T, w *world) string
	// onFS, when set, is a filesystem type the row's trees are on (a
	// loop-mounted image): for clones, which need source and DEST on one
	// filesystem that makes them.
	onFS string
	// unknowable are --json fields a dry run cannot know without
	// writing, each with why: they are not compared, and the -v lines
	// that start with a value given are left out on both sides.
	unknowable  map[string]string
	unknowLines []string
	// groups are names of which either run may take any one first (the
	// first name of a hard link, the file a duplicate shares: whichever
	// worker gets there first): their actions are compared as a set.
	groups [][]string
}

// dryparityLinked is the hard link of dryparityTree: either name may be
// the one copied.
var dryparityLinked = []string{"a.txt", "sub/deep/a-again.txt"}

// dryparityTimes are the --json fields that time a run: they differ
// between any two runs.
var dryparityTimes = map[string]bool{"elapsed_ns": true, "elapsed_seconds": true}

var dryparityRows = []dryparityRow{
	{name: "plain copy", setup: dryparityTree},
	{name: "rerun", setup: func(w *world) { dryparityTreeUnlinked(w); w.copy() }},
	{
		name: "rerun with changes",
		setup: func(w *world) {
			dryparityTreeUnlinked(w)
			w.copy()
			w.write("src/a.txt", "alpha, longer now")
			w.mtime("src/a.txt", old.Add(time.Hour))
			w.chmod("src/b.txt", 0o600)
			w.write("src/sub/new.txt", "new")
		},
	},
	{
		name: "delete",
		setup: func(w *world) {
			dryparityTreeUnlinked(w)
			w.copy()
			dryparityExtras(w)
		},
		args: []string{"--delete"},
	},
	{
		name: "delete backup-dir",
		setup: func(w *world) {
			dryparityTree(w) // both names of the link replaced, both kept
			w.copy()
			dryparityExtras(w)
			w.write("src/a.txt", "alpha, replaced")
			w.mtime("src/a.txt", old.Add(time.Hour))
			dryparityReplaceNonRegular(w)
		},
		args:     []string{"--delete"},
		sideArgs: [][2]string{{"--backup-dir", "bk"}},
	},
	{
		name: "link-dest",
		setup: func(w *world) {
			dryparityTreeUnlinked(w)
			w.copyTo("prev")
			w.write("src/a.txt", "changed since the snapshot")
			w.mtime("src/a.txt", old.Add(time.Hour))
			w.write("src/sub/new.txt", "new")
		},
		args: []string{"--link-dest", "../prev"},
	},
	{
		name: "move",
		setup: func(w *world) {
			dryparityTree(w)
			w.write("src/sub/deep/more/e.txt", "echo")
		},
		args: []string{"--move"},
	},
	{
		name: "move rerun",
		setup: func(w *world) {
			dryparityTreeUnlinked(w)
			w.copy()
			w.write("src/sub/new.txt", "new")
		},
		args: []string{"--move"},
	},
	{
		name: "update",
		setup: func(w *world) {
			dryparityTreeUnlinked(w)
			w.copy()
			w.write("dst/a.txt", "edited in DEST")
			w.mtime("dst/a.txt", old.Add(24*time.Hour))
			w.write("dst/b.txt", "older in DEST")
			w.mtime("dst/b.txt", old.Add(-24*time.Hour))
		},
		args: []string{"--update"},
	},
	{
		name: "move update",
		setup: func(w *world) {
			dryparityTreeUnlinked(w)
			w.copy()
			w.write("dst/a.txt", "edited in DEST")
			w.mtime("dst/a.txt", old.Add(24*time.Hour))
		},
		args: []string{"--move", "--update"},
	},
	{
		name: "ignore-existing",
		setup: func(w *world) {
			dryparityTreeUnlinked(w)
			w.copy()
			w.write("dst/a.txt", "edited in DEST")
			w.chmod("dst/b.txt", 0o600)
			w.write("src/sub/new.txt", "new")
		},
		args: []string{"--ignore-existing"},
	},
	{
		name: "dedup",
		setup: func(w *world) {
			dryparityTree(w)
			w.write("src/dup1.bin", strings.Repeat("same bytes ", 500))
			w.write("src/sub/dup2.bin", strings.Repeat("same bytes ", 500))
			w.mtime("src/dup1.bin", old)
			w.mtime("src/sub/dup2.bin", old)
		},
		groups: [][]string{{"dup1.bin", "sub/dup2.bin"}},
	},
	{
		name: "delete max-delete",
		setup: func(w *world) {
			dryparityTreeUnlinked(w)
			w.copy()
			dryparityExtras(w)
		},
		args: []string{"--delete", "--max-delete", "2"},
	},
	{
		name: "delete backup-dir on another filesystem",
		setup: func(w *world) {
			dryparityTree(w)
			w.copy()
			dryparityExtras(w)
			w.write("src/a.txt", "alpha, replaced")
			w.mtime("src/a.txt", old.Add(time.Hour))
			dryparityReplaceNonRegular(w)
			if err := syscall.Mkfifo(w.path("dst/gone-fifo"), 0o644); err != nil {
				w.t.Fatal(err)
			}
		},
		args: []string{"--delete"},
		more: func(t *testing.T, w *world) []string {
			return []string{"--backup-dir", filepath.Join(dryparityTmpfs(t), "bk")}
		},
	},
	{
		// Without the hard link: which of its names is judged first (and
		// so read, the other taking its digest) is the workers' race, in
		// either run.
		name: "checksum",
		setup: func(w *world) {
			w.tree()
			w.copy()
			w.mtime("dst/a.txt", old.Add(time.Hour))
			w.write("dst/b.txt", "other")
			w.mtime("dst/b.txt", old.Add(2*time.Hour))
		},
		args: []string{"--checksum"},
	},
	{
		name: "mhl",
		setup: func(w *world) {
			dryparityTreeUnlinked(w)
			w.copy()
			w.write("src/sub/new.txt", "new")
		},
		args: []string{"--mhl"},
		unknowable: map[string]string{
			"mhl":            "the generation's file name holds the time it is written",
			"mhl_generation": "a dry run writes no generation",
			"mhl_files":      "a dry run writes no generation",
		},
	},
	{
		name: "case collision on exFAT",
		setup: func(w *world) {
			w.write("src/docs/README", "upper\n")
			w.write("src/docs/readme", "lower case\n")
			w.write("src/docs/other", "other\n")
		},
		dest: func(t *testing.T, w *world) string { return filepath.Join(mountExfatCLI(t), "copy") },
		unknowable: map[string]string{
			"not_kept": "what a filesystem keeps of the permission bits is learnt from a file written there (internal/destfs)",
		},
		unknowLines: []string{"fastcopy: warning: not kept: permission bits: "},
	},
	{
		// Larger than a copy's buffer: a duplicate read for its digest
		// is read again to be copied.
		name: "dedup large",
		setup: func(w *world) {
			dryparityTree(w)
			w.write("src/big1.bin", strings.Repeat("large bytes ", 800000))
			w.write("src/sub/big2.bin", strings.Repeat("large bytes ", 800000))
			w.write("src/sub/big3.bin", strings.Repeat("other bytes ", 800000))
			w.mtime("src/big1.bin", old)
			w.mtime("src/sub/big2.bin", old)
			w.mtime("src/sub/big3.bin", old)
		},
		groups: [][]string{{"big1.bin", "sub/big2.bin"}},
	},
	{
		name:  "plain copy on btrfs",
		setup: dryparityTree,
		onFS:  "btrfs",
	},
	{
		name:  "plain copy on xfs",
		setup: dryparityTree,
		onFS:  "xfs",
	},
	{
		name: "dedup on btrfs",
		setup: func(w *world) {
			dryparityTree(w)
			w.write("src/dup1.bin", strings.Repeat("same bytes ", 500))
			w.write("src/sub/dup2.bin", strings.Repeat("same bytes ", 500))
			w.mtime("src/dup1.bin", old)
			w.mtime("src/sub/dup2.bin", old)
		},
		groups: [][]string{{"dup1.bin", "sub/dup2.bin"}},
		onFS:   "btrfs",
	},
	{
		name: "hard links rerun",
		setup: func(w *world) {
			dryparityTreeUnlinked(w)
			w.copy()
			w.link("src/b.txt", "src/b-again.txt")
		},
	},
}

// dryparityTree is the harness's small tree with every kind of entry:
// files, an empty file, a symlink, a FIFO and a hard link.
func dryparityTree(w *world) {
	dryparityTreeUnlinked(w)
	w.link("src/a.txt", "src/sub/deep/a-again.txt")
}

// dryparityTreeUnlinked is dryparityTree without the hard link, for the
// trees copied once before: which name of a hard link a run judges
// first is the workers' race, and on a rerun it decides which name's
// cache entry is asked (the first copy recorded one name), so that the
// cache hits and bytes hashed vary from run to run, in either run.
func dryparityTreeUnlinked(w *world) {
	w.tree()
	if err := syscall.Mkfifo(w.path("src/sub/fifo"), 0o644); err != nil {
		w.t.Fatal(err)
	}
	if err := lchtimes(w.path("src/sub/fifo"), old); err != nil {
		w.t.Fatal(err)
	}
}

// dryparityExtras puts in DEST what the source lacks: files, a symlink
// and a directory with files in it.
func dryparityExtras(w *world) {
	w.write("dst/gone.txt", "only in DEST")
	w.write("dst/sub/gone/x.txt", "x")
	w.write("dst/sub/gone/y.txt", "y")
	w.symlink("a.txt", "dst/gone-link")
}

// dryparityReplaceNonRegular makes DEST's symlink and FIFO other than the
// source's, so that the copy replaces them.
func dryparityReplaceNonRegular(w *world) {
	if err := syscall.Unlink(w.path("dst/link")); err != nil {
		w.t.Fatal(err)
	}
	w.symlink("b.txt", "dst/link")
	if err := syscall.Unlink(w.path("dst/sub/fifo")); err != nil {
		w.t.Fatal(err)
	}
	w.write("dst/sub/fifo", "a file where the source has a FIFO")
}

func TestDryParity(t *testing.T) {
	for _, row := range dryparityRows {
		t.Run(strings.ReplaceAll(row.name, " ", "_"), func(t *testing.T) {
			w := newWorld(t)
			if row.onFS != "" {
				w = dryparityWorldOn(t, row.onFS)
			}
			row.setup(w)
			w.oldDirTimes()
			if t.Failed() {
				return
			}
			dest := w.dst()
			if row.dest != nil {
				dest = row.dest(t, w)
			}
			args := append([]string{}, row.args...)
			for _, a := range row.sideArgs {
				args = append(args, a[0], w.path(a[1]))
			}
			if row.more != nil {
				args = append(args, row.more(t, w)...)
			}
			args = append(args, w.src, dest)
			beforeSide, beforeSrc := w.snapshot(), dryparityCopy(w, w.src, "before-src")
			dryJSON, dryLines := dryparityRun(w, append([]string{"-n"}, args...)...)
			for _, p := range [][2]string{{beforeSide, w.side}, {beforeSrc, w.src}} {
				if diffs, err := treecmp.Compare(p[0], p[1], treecmp.Options{}); err != nil || len(diffs) > 0 {
					t.Errorf("the dry run changed %s: %v %s", p[1], err, strings.Join(diffs, "\n"))
				}
			}
			realJSON, realLines := dryparityRun(w, args...)
			groups := append([][]string{dryparityLinked}, row.groups...)
			for k, why := range row.unknowable {
				t.Logf("--json %s not compared: %s (the dry run says %s, the real run %s)", k, why, dryparityJSON(dryJSON[k]), dryparityJSON(realJSON[k]))
				delete(dryJSON, k)
				delete(realJSON, k)
			}
			dryLines, realLines = dryparityDrop(dryLines, row.unknowLines), dryparityDrop(realLines, row.unknowLines)
			dryparityCompare(t, dryJSON, realJSON, dryparityGroups(dryLines, groups), dryparityGroups(realLines, groups))
		})
	}
}

// dryparityWorldOn is newWorld on a loop-mounted filesystem of type typ,
// or skips saying what is missing.
func dryparityWorldOn(t *testing.T, typ string) *world {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("skipping: needs root to mount a %s image", typ)
	}
	fs := loopfs.Mount(t, loopfs.Config{Type: typ, Size: 320 << 20})
	dir := fs.Path("w")
	w := &world{t: t, dir: dir, src: filepath.Join(dir, "src"), side: filepath.Join(dir, "fc"), oracle: filepath.Join(dir, "rs"), cache: filepath.Join(t.TempDir(), "hashes.db")}
	for _, d := range []string{w.src, w.side} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// dryparityTmpfs mounts a small tmpfs for the test, a filesystem other
// than the trees', or skips saying why it cannot.
func dryparityTmpfs(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: needs root to mount a tmpfs")
	}
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=16m"); err != nil {
		t.Skipf("skipping: cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(mnt, 0) })
	return mnt
}

// dryparityCopy copies dir with cp -a to name beside the row's trees.
func dryparityCopy(w *world, dir, name string) string {
	p := filepath.Join(w.dir, name)
	if out, err := exec.Command("cp", "-a", dir, p).CombinedOutput(); err != nil {
		w.t.Fatalf("cp -a: %v\n%s", err, out)
	}
	return p
}

// dryparityRun runs fastcopy -v --json with the row's cache and returns
// its report and its -v lines (diagnostics left out).
func dryparityRun(w *world, args ...string) (map[string]any, []string) {
	w.t.Helper()
	var stdout, stderr bytes.Buffer
	full := append([]string{"-v", "--json", "--cache", w.cache}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code := run(ctx, full, &stdout, &stderr)
	var rep map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		w.t.Fatalf("fastcopy %s: exit %d: %v\n%s%s", strings.Join(full, " "), code, err, stdout.String(), stderr.String())
	}
	var lines []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if l == "" || strings.HasPrefix(l, "fastcopy: jobs:") || strings.HasPrefix(l, "fastcopy: read order:") {
			continue
		}
		if f := strings.Fields(l); len(f) >= 2 && !strings.HasPrefix(l, "fastcopy:") {
			l = f[0] + " " + strings.Join(f[1:], " ")
		}
		lines = append(lines, l)
	}
	sort.Strings(lines)
	return rep, lines
}

// dryparityCompare holds the dry run's report against the real run's.
func dryparityCompare(t *testing.T, dryJSON, realJSON map[string]any, dryLines, realLines []string) {
	t.Helper()
	if dryJSON["dry_run"] != true || realJSON["dry_run"] != false {
		t.Errorf("dry_run: the dry run says %v, the real run %v", dryJSON["dry_run"], realJSON["dry_run"])
	}
	// The dry run counts what --delete would remove as would_delete.
	dry := map[string]any{}
	for k, v := range dryJSON {
		dry[k] = v
	}
	if d, ok := dry["deleted"].(float64); ok && d != 0 {
		t.Errorf("deleted: the dry run says %v: it deletes nothing", d)
	}
	if realJSON["would_delete"] == float64(0) { // else both refused by --max-delete
		dry["deleted"], dry["would_delete"] = dry["would_delete"], float64(0)
	}
	keys := map[string]bool{}
	for k := range dry {
		keys[k] = true
	}
	for k := range realJSON {
		keys[k] = true
	}
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if dryparityTimes[k] || k == "dry_run" {
			continue
		}
		a, b := dryparityJSON(dry[k]), dryparityJSON(realJSON[k])
		if a != b {
			t.Errorf("--json %s: the dry run says %s, the real run %s", k, a, b)
		}
	}
	// -v: each would-X of the dry run is the real run's X.
	var norm []string
	for _, l := range dryLines {
		if !strings.HasPrefix(l, "would-") {
			if !strings.HasPrefix(l, "fastcopy:") && !strings.HasPrefix(l, "skip ") && !strings.HasPrefix(l, "fail ") && !strings.HasPrefix(l, "not-kept ") {
				t.Errorf("-v: the dry run says %q: a dry run's action that writes says \"would-\"", l)
			}
			norm = append(norm, l)
			continue
		}
		norm = append(norm, strings.TrimPrefix(l, "would-"))
	}
	sort.Strings(norm)
	var realNorm []string // a --max-delete refusal says would-delete in the real run too
	for _, l := range realLines {
		realNorm = append(realNorm, strings.TrimPrefix(l, "would-"))
	}
	sort.Strings(realNorm)
	if d := dryparityDiff(norm, realNorm); d != "" {
		t.Errorf("-v differs (- the dry run's, would- taken off; + the real run's):\n%s", d)
	}
}

// dryparityDrop leaves out the lines that start with one of prefixes.
func dryparityDrop(lines, prefixes []string) []string {
	var out []string
next:
	for _, l := range lines {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				continue next
			}
		}
		out = append(out, l)
	}
	return out
}

// dryparityGroups writes each name of a group in lines as the group's
// names together, so that which of them came first does not count.
func dryparityGroups(lines []string, groups [][]string) []string {
	of := map[string]string{}
	for _, g := range groups {
		for _, n := range g {
			of[n] = "{" + strings.Join(g, "|") + "}"
		}
	}
	var out []string
	for _, l := range lines {
		if act, p, ok := strings.Cut(l, " "); ok && of[p] != "" && !strings.HasPrefix(l, "fastcopy:") {
			l = act + " " + of[p]
		}
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

func dryparityJSON(v any) string {
	if v == nil {
		return "(absent)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// dryparityDiff lists the lines only one of two sorted lists has.
func dryparityDiff(a, b []string) string {
	var out []string
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j >= len(b) || (i < len(a) && a[i] < b[j]):
			out = append(out, "- "+a[i])
			i++
		case i >= len(a) || b[j] < a[i]:
			out = append(out, "+ "+b[j])
			j++
		default:
			i++
			j++
		}
	}
	return strings.Join(out, "\n")
}
