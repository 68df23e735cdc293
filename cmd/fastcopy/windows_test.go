package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestWindowsTypedQuotes: a quoted path shows its backslashes single, as
// typed; a name with a control character, a quote or a byte that is not
// UTF-8 keeps the Go quoting that shows it; other text is left alone.
func TestWindowsTypedQuotes(t *testing.T) {
	for in, want := range map[string]string{
		`error: "C:\\Users\\me\\dst": is full`:            `error: "C:\Users\me\dst": is full`,
		`"D:\\Fotos\\café 1.jpg" and "E:\\b"`:             `"D:\Fotos\café 1.jpg" and "E:\b"`,
		`"C:\\a\tb": tab`:                                 `"C:\\a\tb": tab`,
		`"C:\\a\x01"`:                                     `"C:\\a\x01"`,
		`"C:\\bad\xff"`:                                   `"C:\\bad\xff"`,
		`"C:\\say\"hi\""`:                                 `"C:\\say\"hi\""`,
		`no quotes C:\\x`:                                 `no quotes C:\\x`,
		`unbalanced " C:\\x`:                              `unbalanced " C:\\x`,
		`copied 3 files (5.7 MiB), skipped 0 in "/media"`: `copied 3 files (5.7 MiB), skipped 0 in "/media"`,
		`"\\\\?\\C:\\long"`:                               `"\\?\C:\long"`,
	} {
		if got := typedQuotes(in); got != want {
			t.Errorf("typedQuotes(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestWindowsCopyKeepsWhatItSays: a plain copy onto the system's own
// filesystem warns of nothing (on Windows before, every run said the
// permission bits and the extended attributes were not kept), keeps a
// read-only file read-only and the times, and a rerun takes every digest
// from the hash cache (on Windows before, none: the cache's journal could
// not be renamed while open, no volume had an identity, and a source's
// entry was dropped since only an administrator may flush a volume).
func TestWindowsCopyKeepsWhatItSays(t *testing.T) {
	work := t.TempDir()
	src, dst, cache := filepath.Join(work, "src"), filepath.Join(work, "dst"), filepath.Join(work, "cache", "hashes.db")
	old := time.Date(2021, 6, 1, 10, 0, 0, 123456700, time.UTC)
	files := map[string]string{"a.txt": "alpha\n", "sub/b.bin": strings.Repeat("b", 70000), "ro.txt": "read only\n"}
	for rel, data := range files {
		p := filepath.Join(src, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(src, "ro.txt"), 0o444); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // a read-only file cannot be removed on Windows
		_ = os.Chmod(filepath.Join(src, "ro.txt"), 0o644)
		_ = os.Chmod(filepath.Join(dst, "ro.txt"), 0o644)
	})
	copyOnce := func() string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"--cache", cache, src, dst}, &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
		}
		if stderr.Len() != 0 {
			t.Errorf("a plain copy said on stderr:\n%s", stderr.String())
		}
		return stdout.String()
	}
	copyOnce()
	for rel, data := range files {
		p := filepath.Join(dst, filepath.FromSlash(rel))
		got, err := os.ReadFile(p)
		if err != nil || string(got) != data {
			t.Errorf("%s: %d bytes, %v; want its source's", rel, len(got), err)
			continue
		}
		if st, err := os.Stat(p); err != nil || !st.ModTime().Equal(old) {
			t.Errorf("%s: mtime %v, %v; want %v", rel, st.ModTime(), err, old)
		}
	}
	if st, err := os.Stat(filepath.Join(dst, "ro.txt")); err != nil || st.Mode().Perm()&0o200 != 0 {
		t.Errorf("ro.txt: %v, %v; want it read-only, as its source", st.Mode(), err)
	}
	again := copyOnce()
	want := "6 digests from cache, 0 B hashed"
	if !strings.Contains(again, "skipped 3 unchanged") || !strings.Contains(again, want) {
		t.Errorf("rerun said %q; want 3 skipped, %q", again, want)
	}
}

// windowsSymlinkMade reports whether p is a symlink: Wine's os.Symlink
// reports success and makes none.
func windowsSymlinkMade(p string) bool {
	st, err := os.Lstat(p)
	return err == nil && st.Mode()&os.ModeSymlink != 0
}

// windowsSkipNonUTF8 skips a test that needs the file name name, which is
// not UTF-8, on Windows: its names are UTF-16, and such a name cannot be
// made there.
func windowsSkipNonUTF8(t *testing.T, name string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skipf("skipping: needs the name %q, which is not UTF-8; Windows names cannot hold it", name)
	}
}

// TestWindowsCreationTimeKept: a copy gets its source's creation time, as
// robocopy gives it, whether read back from the device (the committer
// sets the times) or not (--verify off: the copier does).
func TestWindowsCreationTimeKept(t *testing.T) {
	if runtime.GOOS != "windows" {
		t.Skip("skipping: creation times are read and kept on Windows only")
	}
	born := time.Date(2019, 3, 4, 5, 6, 7, 800000000, time.UTC).UnixNano()
	for _, verify := range []string{"device", "off"} {
		work := t.TempDir()
		src, dst := filepath.Join(work, "src"), filepath.Join(work, "dst")
		if err := os.MkdirAll(src, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, "photo.jpg"), []byte("jpeg"), 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := fileio.OpenDir(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := fileio.SetBtime(d, "photo.jpg", born); err != nil {
			t.Fatal(err)
		}
		st, err := d.Lstat("photo.jpg")
		d.Close()
		if err != nil || st.Btime != born {
			// Wine keeps no creation time of its own: it shows one made
			// from the Linux file's times, which Linux cannot set.
			t.Skipf("skipping: a creation time set shows as %v (%v): this system does not keep it (Wine)", time.Unix(0, st.Btime).UTC(), err)
		}
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"--no-cache", "--verify", verify, src, dst}, &stdout, &stderr); code != 0 || stderr.Len() != 0 {
			t.Fatalf("--verify %s: exit %d\n%s%s", verify, code, stdout.String(), stderr.String())
		}
		dd, err := fileio.OpenDir(dst)
		if err != nil {
			t.Fatal(err)
		}
		st, err = dd.Lstat("photo.jpg")
		dd.Close()
		if err != nil || st.Btime != born {
			t.Errorf("--verify %s: the copy was created at %v (%v); want its source's %v", verify, time.Unix(0, st.Btime).UTC(), err, time.Unix(0, born).UTC())
		}
	}
}

// TestWindowsLongPaths: a source and a destination whose paths are longer
// than 260 characters (Windows' MAX_PATH, which a path not in its \\?\
// form may not exceed) are copied and verified.
func TestWindowsLongPaths(t *testing.T) {
	work := t.TempDir()
	deep := func(root string) string {
		p := root
		for i := 0; len(p) < 320; i++ {
			p = filepath.Join(p, fmt.Sprintf("a directory %d with a long name", i))
		}
		return p
	}
	src, dst := deep(filepath.Join(work, "src")), deep(filepath.Join(work, "dst"))
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join("sub", strings.Repeat("n", 80)+".txt")
	if err := os.WriteFile(filepath.Join(src, name), []byte("deep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--no-cache", src, dst}, {"verify", "--no-cache", src, dst}} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != 0 || stderr.Len() != 0 {
			t.Fatalf("%s: exit %d\n%s%s", args[0], code, stdout.String(), stderr.String())
		}
	}
	if got, err := os.ReadFile(filepath.Join(dst, name)); err != nil || string(got) != "deep\n" {
		t.Errorf("the copy at %d characters: %q, %v", len(filepath.Join(dst, name)), got, err)
	}
}
