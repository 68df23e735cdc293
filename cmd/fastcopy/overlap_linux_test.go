//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// overlapExists fails t when one of paths is missing.
func overlapExists(t *testing.T, what string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: %s is gone: %v", what, p, err)
		}
	}
}

// overlapRefused fails t unless r is a usage refusal (exit 2) whose
// message holds why, with a hint.
func overlapRefused(t *testing.T, what string, r result, why string) {
	t.Helper()
	if r.code != 2 || !strings.Contains(r.stderr, why) || !strings.Contains(r.stderr, "fastcopy: hint: ") {
		t.Errorf("%s: exit %d, want 2 with %q and a hint:\n%s%s", what, r.code, why, r.stdout, r.stderr)
	}
}

// overlapDestX makes DEST holding x/keep.tmp (excluded: never copied
// anywhere) and x/a, and returns DEST.
func overlapDestX(t *testing.T, work string) string {
	dst := filepath.Join(work, "DEST")
	writeTestFile(t, filepath.Join(dst, "x", "keep.tmp"), "the only copy")
	writeTestFile(t, filepath.Join(dst, "x", "a"), "a")
	return dst
}

// TestOverlapDeleteSourceInDestSymlink mirrors into DEST its own
// directory DEST/x named through a symlink: by its path the source is
// outside DEST, by identity inside, and --delete would remove it with the
// excluded keep.tmp that is nowhere else. Refused, exit 2, as DEST/x
// named directly is.
func TestOverlapDeleteSourceInDestSymlink(t *testing.T) {
	t.Parallel()
	bin := buildFastcopy(t)
	work := t.TempDir()
	dst := overlapDestX(t, work)
	s := filepath.Join(work, "s")
	if err := os.Symlink(filepath.Join(dst, "x"), s); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{filepath.Join(dst, "x"), s, s + "/"} {
		r := runBinary(t, bin, 0, 0, "--no-cache", "--delete", "--exclude", "/keep.tmp", src, dst)
		overlapRefused(t, "--delete "+src+" DEST", r, "is inside the destination")
		overlapExists(t, "--delete "+src+" DEST", filepath.Join(dst, "x", "keep.tmp"), filepath.Join(dst, "x", "a"))
	}
}

// TestOverlapDeleteSourceInDestBindMount is the same with DEST/x bind
// mounted elsewhere: the mount's root has DEST/x's identity, and its ".."
// leads out of DEST, so only its place in its own filesystem (through the
// mount that shows DEST) tells it is inside DEST.
func TestOverlapDeleteSourceInDestBindMount(t *testing.T) {
	t.Parallel()
	needRootForMount(t)
	bin := buildFastcopy(t)
	work := t.TempDir()
	dst := overlapDestX(t, work)
	writeTestFile(t, filepath.Join(dst, "x", "deep", "b"), "b")
	mnt := filepath.Join(work, "mnt")
	bindMount(t, filepath.Join(dst, "x"), mnt)
	for _, src := range []string{mnt, filepath.Join(mnt, "deep")} {
		r := runBinary(t, bin, 0, 0, "--no-cache", "--delete", "--exclude", "/keep.tmp", src, dst)
		overlapRefused(t, "--delete "+src+" DEST", r, "is inside the destination")
		overlapExists(t, "--delete "+src+" DEST", filepath.Join(dst, "x", "keep.tmp"), filepath.Join(dst, "x", "deep", "b"))
	}
	// A bind mount of a bind mount: its root is still DEST/x.
	mnt2 := filepath.Join(work, "mnt2")
	bindMount(t, mnt, mnt2)
	r := runBinary(t, bin, 0, 0, "--no-cache", "--delete", "--exclude", "/keep.tmp", mnt2, dst)
	overlapRefused(t, "--delete mnt2 DEST", r, "is inside the destination")
	overlapExists(t, "--delete mnt2 DEST", filepath.Join(dst, "x", "keep.tmp"))
}

// TestOverlapBackupDirBindMount names as --backup-dir a directory of DEST
// through a bind mount (through a symlink it is refused too): accepted,
// every --delete run would back up its own backups one level deeper.
// Refused, exit 2, nothing removed.
func TestOverlapBackupDirBindMount(t *testing.T) {
	t.Parallel()
	needRootForMount(t)
	bin := buildFastcopy(t)
	work := t.TempDir()
	src, dst := filepath.Join(work, "src"), filepath.Join(work, "DEST")
	writeTestFile(t, filepath.Join(src, "f"), "new")
	writeTestFile(t, filepath.Join(dst, "old"), "old")
	writeTestFile(t, filepath.Join(dst, "bk", "kept"), "an older backup")
	mnt := filepath.Join(work, "mnt")
	bindMount(t, filepath.Join(dst, "bk"), mnt)
	link := filepath.Join(work, "bklink")
	if err := os.Symlink(filepath.Join(dst, "bk"), link); err != nil {
		t.Fatal(err)
	}
	for _, bd := range []string{mnt, filepath.Join(mnt, "new", "deeper"), link} {
		r := runBinary(t, bin, 0, 0, "--no-cache", "--delete", "--backup-dir", bd, src, dst)
		overlapRefused(t, "--backup-dir "+bd, r, "is inside the destination")
		overlapExists(t, "--backup-dir "+bd, filepath.Join(dst, "old"), filepath.Join(dst, "bk", "kept"))
	}
	// The other way round: DEST inside the backup directory, through a
	// bind mount of DEST's parent. Backups under their paths relative to
	// DEST would be written among DEST's entries.
	mntTop := filepath.Join(work, "mnttop")
	bindMount(t, work, mntTop)
	r := runBinary(t, bin, 0, 0, "--no-cache", "--delete", "--backup-dir", mntTop, src, dst)
	overlapRefused(t, "--backup-dir above DEST", r, "the destination is inside it")
	overlapExists(t, "--backup-dir above DEST", filepath.Join(dst, "old"))
}

// TestOverlapRecordsInDestBindMount names --manifest and --log in a
// directory of DEST through a bind mount of it, and --backup-dir in the
// source through a bind mount of the source's subdirectory: each is
// refused before anything is written.
func TestOverlapRecordsInDestBindMount(t *testing.T) {
	t.Parallel()
	needRootForMount(t)
	bin := buildFastcopy(t)
	work := t.TempDir()
	src, dst := filepath.Join(work, "src"), filepath.Join(work, "DEST")
	writeTestFile(t, filepath.Join(src, "f"), "new")
	writeTestFile(t, filepath.Join(src, "sub", "g"), "g")
	writeTestFile(t, filepath.Join(dst, "sub", "old"), "old")
	mnt := filepath.Join(work, "mnt")
	bindMount(t, filepath.Join(dst, "sub"), mnt)
	smnt := filepath.Join(work, "smnt")
	bindMount(t, filepath.Join(src, "sub"), smnt)
	for _, tc := range []struct {
		flag, path, why string
	}{
		{"--manifest", filepath.Join(mnt, "m.xxh"), "is inside the destination"},
		{"--log", filepath.Join(mnt, "run.log"), "is inside the destination"},
		{"--backup-dir", filepath.Join(smnt, "bk"), "is inside the source"},
	} {
		r := runBinary(t, bin, 0, 0, "--no-cache", "--delete", tc.flag, tc.path, src, dst)
		overlapRefused(t, tc.flag+" "+tc.path, r, tc.why)
		overlapExists(t, tc.flag+" "+tc.path, filepath.Join(dst, "sub", "old"))
		if _, err := os.Lstat(tc.path); err == nil {
			t.Errorf("%s %s: written", tc.flag, tc.path)
		}
	}
}

// TestOverlapDestInSourceSubBindMount names DEST below a bind mount of a
// directory of the source: the mount's ".." leads out of the source, its
// place in its filesystem is inside it. Refused, exit 2, before the walk
// reaches DEST as a source directory.
func TestOverlapDestInSourceSubBindMount(t *testing.T) {
	t.Parallel()
	needRootForMount(t)
	bin := buildFastcopy(t)
	work := t.TempDir()
	src := filepath.Join(work, "src")
	writeTestFile(t, filepath.Join(src, "sub", "g"), "g")
	mnt := filepath.Join(work, "mnt")
	bindMount(t, filepath.Join(src, "sub"), mnt)
	before := names(t, src)
	r := runBinary(t, bin, 0, 0, "--no-cache", src, filepath.Join(mnt, "out"))
	overlapRefused(t, "DEST below a bind mount of SOURCE/sub", r, "destination is inside the source")
	if after := names(t, src); after != before {
		t.Errorf("wrote into the source:\nbefore %s\nafter  %s", before, after)
	}
}

// TestOverlapLinkDestInDest mirrors with --link-dest naming a directory of
// DEST (a relative --link-dest is relative to DEST: "snap1" is DEST/snap1):
// --delete would remove the earlier snapshot the run links from. Refused.
func TestOverlapLinkDestInDest(t *testing.T) {
	t.Parallel()
	bin := buildFastcopy(t)
	work := t.TempDir()
	src, dst := filepath.Join(work, "src"), filepath.Join(work, "DEST")
	writeTestFile(t, filepath.Join(src, "f"), "new")
	writeTestFile(t, filepath.Join(dst, "snap1", "only"), "only here")
	for _, ld := range []string{"snap1", filepath.Join(dst, "snap1"), dst} {
		r := runBinary(t, bin, 0, 0, "--no-cache", "--delete", "--link-dest", ld, src, dst)
		overlapRefused(t, "--link-dest "+ld, r, "is inside the destination")
		overlapExists(t, "--link-dest "+ld, filepath.Join(dst, "snap1", "only"))
	}
}

// overlapDotDot makes work/a/link -> ../b/c, and returns a/link/.. as
// spelled (the kernel's b) and the place filepath.Clean would make of it
// (a).
func overlapDotDot(t *testing.T, work string) (spelled, lexical, real string) {
	t.Helper()
	for _, d := range []string{"a", "b/c"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../b/c", filepath.Join(work, "a", "link")); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(work, "a", "link") + "/..", filepath.Join(work, "a"), filepath.Join(work, "b")
}

// TestOverlapDotDotAfterSymlink spells each path argument with ".." after
// a symlink: a/link -> b/c, so a/link/../d is b/d for the kernel (ls,
// realpath), never a/d. Each argument must name the kernel's place; the
// lexical one, which the user never named, is left alone.
func TestOverlapDotDotAfterSymlink(t *testing.T) {
	t.Parallel()
	bin := buildFastcopy(t)

	t.Run("DEST", func(t *testing.T) {
		work := t.TempDir()
		up, lex, real := overlapDotDot(t, work)
		src := filepath.Join(work, "src")
		writeTestFile(t, filepath.Join(src, "f"), "new")
		writeTestFile(t, filepath.Join(lex, "d", "keepme"), "never named")
		writeTestFile(t, filepath.Join(real, "d", "old"), "extra")
		r := runBinary(t, bin, 0, 0, "--no-cache", "--delete", src, up+"/d")
		if r.code != 0 {
			t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
		}
		overlapExists(t, "DEST a/link/../d", filepath.Join(lex, "d", "keepme"), filepath.Join(real, "d", "f"))
		if _, err := os.Lstat(filepath.Join(lex, "d", "f")); err == nil {
			t.Errorf("copied into a/d, which the user never named")
		}
		if _, err := os.Lstat(filepath.Join(real, "d", "old")); err == nil {
			t.Errorf("b/d/old not mirrored away: the run went elsewhere")
		}
	})

	t.Run("DEST not made yet", func(t *testing.T) {
		work := t.TempDir()
		up, lex, real := overlapDotDot(t, work)
		src := filepath.Join(work, "src")
		writeTestFile(t, filepath.Join(src, "f"), "new")
		r := runBinary(t, bin, 0, 0, "--no-cache", src, up+"/n/e/w")
		if r.code != 0 {
			t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
		}
		overlapExists(t, "DEST a/link/../n/e/w", filepath.Join(real, "n", "e", "w", "f"))
		if _, err := os.Lstat(filepath.Join(lex, "n")); err == nil {
			t.Errorf("made a/n, which the user never named")
		}
		// Up from a directory that does not exist: refused, nothing made.
		r = runBinary(t, bin, 0, 0, "--no-cache", src, up+"/m/../link/../q")
		overlapRefused(t, "DEST a/link/../m/../link/../q", r, `goes up ("..") from a directory that does not exist yet`)
		for _, p := range []string{filepath.Join(real, "m"), filepath.Join(lex, "q"), filepath.Join(real, "q")} {
			if _, err := os.Lstat(p); err == nil {
				t.Errorf("made %s", p)
			}
		}
	})

	t.Run("SOURCE", func(t *testing.T) {
		work := t.TempDir()
		up, lex, real := overlapDotDot(t, work)
		writeTestFile(t, filepath.Join(lex, "s", "wrong"), "not named")
		writeTestFile(t, filepath.Join(real, "s", "right"), "named")
		dst := filepath.Join(work, "out")
		r := runBinary(t, bin, 0, 0, "--no-cache", up+"/s", dst)
		if r.code != 0 {
			t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
		}
		overlapExists(t, "SOURCE a/link/../s", filepath.Join(dst, "right"))
		if _, err := os.Lstat(filepath.Join(dst, "wrong")); err == nil {
			t.Errorf("copied a/s, which the user never named")
		}
	})

	t.Run("--backup-dir", func(t *testing.T) {
		work := t.TempDir()
		up, lex, real := overlapDotDot(t, work)
		src, dst := filepath.Join(work, "src"), filepath.Join(work, "DEST")
		writeTestFile(t, filepath.Join(src, "f"), "new")
		writeTestFile(t, filepath.Join(dst, "old"), "old")
		r := runBinary(t, bin, 0, 0, "--no-cache", "--delete", "--backup-dir", up+"/bk", src, dst)
		if r.code != 0 {
			t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
		}
		overlapExists(t, "--backup-dir a/link/../bk", filepath.Join(real, "bk", "old"))
		if _, err := os.Lstat(filepath.Join(lex, "bk")); err == nil {
			t.Errorf("backed up into a/bk, which the user never named")
		}
	})

	t.Run("--link-dest", func(t *testing.T) {
		// Relative to DEST, which is reached through the symlink:
		// DEST/../snap1 is b/snap1, beside the link's target.
		work := t.TempDir()
		_, lex, real := overlapDotDot(t, work)
		src := filepath.Join(work, "src")
		writeTestFile(t, filepath.Join(src, "f"), "same")
		writeTestFile(t, filepath.Join(real, "snap1", "f"), "same")
		writeTestFile(t, filepath.Join(lex, "snap1", "f"), "same")
		dst := filepath.Join(lex, "link") // b/c
		r := runBinary(t, bin, 0, 0, "--no-cache", "-v", "--link-dest", "../snap1", src, dst)
		if r.code != 0 {
			t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
		}
		a, err1 := os.Stat(filepath.Join(real, "c", "f"))
		b, err2 := os.Stat(filepath.Join(real, "snap1", "f"))
		if err1 != nil || err2 != nil || !os.SameFile(a, b) {
			t.Errorf("b/c/f is not a link to b/snap1/f (%v, %v):\n%s%s", err1, err2, r.stdout, r.stderr)
		}
	})

	t.Run("--cache", func(t *testing.T) {
		work := t.TempDir()
		up, lex, real := overlapDotDot(t, work)
		src := filepath.Join(work, "src")
		writeTestFile(t, filepath.Join(src, "f"), "new")
		r := runBinary(t, bin, 0, 0, "--cache", up+"/cdir/h.db", src, filepath.Join(work, "out"))
		if r.code != 0 {
			t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
		}
		overlapExists(t, "--cache a/link/../cdir/h.db", filepath.Join(real, "cdir", "h.db"))
		if _, err := os.Lstat(filepath.Join(lex, "cdir")); err == nil {
			t.Errorf("made a/cdir, which the user never named")
		}
	})

	t.Run("--log --manifest --files-from", func(t *testing.T) {
		work := t.TempDir()
		up, lex, real := overlapDotDot(t, work)
		src := filepath.Join(work, "src")
		writeTestFile(t, filepath.Join(src, "f"), "new")
		writeTestFile(t, filepath.Join(src, "g"), "new")
		writeTestFile(t, filepath.Join(real, "list"), "f\n")
		writeTestFile(t, filepath.Join(lex, "list"), "g\n")
		dst := filepath.Join(work, "out")
		r := runBinary(t, bin, 0, 0, "--no-cache", "--log", up+"/run.log", "--manifest", up+"/m.xxh", "--files-from", up+"/list", src, dst)
		if r.code != 0 {
			t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
		}
		overlapExists(t, "--log --manifest --files-from", filepath.Join(real, "run.log"), filepath.Join(real, "m.xxh"), filepath.Join(dst, "f"))
		for _, p := range []string{filepath.Join(lex, "run.log"), filepath.Join(lex, "m.xxh"), filepath.Join(dst, "g")} {
			if _, err := os.Lstat(p); err == nil {
				t.Errorf("%s written: a lexical reading of a/link/..", p)
			}
		}
	})
}
