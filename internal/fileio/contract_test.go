package fileio_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// These tests hold every platform to the same contract; what a platform
// only approximates is spelled out where it is checked.

func openRoot(t *testing.T) (*fileio.Dir, string) {
	t.Helper()
	dir := t.TempDir()
	d, err := fileio.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, dir
}

func writeFile(t *testing.T, d *fileio.Dir, name, content string) {
	t.Helper()
	f, err := fileio.CreateTemp(d, name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.WriteAt([]byte(content), 0); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, d *fileio.Dir, name string) string {
	t.Helper()
	f, err := d.Open(name, false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1024)
	n, err := f.ReadFull(buf, 0)
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n])
}

// symlink makes a symlink or skips the test where the process may not
// (Windows without Developer Mode or the privilege).
func symlink(t *testing.T, d *fileio.Dir, target, name string) {
	t.Helper()
	if err := d.Symlink(target, name); err != nil {
		if runtime.GOOS == "windows" && fileio.IsPermission(err) {
			t.Skipf("cannot create symlinks here: %v", err)
		}
		t.Fatal(err)
	}
}

func TestCreateTempIsExclusive(t *testing.T) {
	t.Parallel()
	d, _ := openRoot(t)
	writeFile(t, d, "a", "first")
	if _, err := fileio.CreateTemp(d, "a"); !fileio.IsExist(err) {
		t.Fatalf("CreateTemp over an existing name: got %v, want an IsExist error", err)
	}
	st, err := d.Lstat("a")
	if err != nil {
		t.Fatal(err)
	}
	if !st.IsRegular() || st.Size != 5 || st.Nlink != 1 {
		t.Fatalf("Lstat: got %+v", st)
	}
	if st.Sparse() {
		t.Fatalf("a 5-byte file reported sparse: %+v", st)
	}
}

func TestReadAtEnd(t *testing.T) {
	t.Parallel()
	d, _ := openRoot(t)
	writeFile(t, d, "a", "hello")
	f, err := d.Open("a", false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 8)
	if n, err := f.ReadAt(buf, 5); n != 0 || err != nil {
		t.Fatalf("ReadAt at the end: got %d, %v; want 0, nil", n, err)
	}
	if n, err := f.ReadFull(buf, 2); n != 3 || err != nil || string(buf[:n]) != "llo" {
		t.Fatalf("ReadFull across the end: got %d %q, %v", n, buf[:n], err)
	}
	n, err := f.Read(buf)
	if n != 5 || err != nil {
		t.Fatalf("Read: got %d, %v", n, err)
	}
	if n, err := f.Read(buf); n != 0 || err != nil {
		t.Fatalf("Read at the end: got %d, %v; want 0, nil", n, err)
	}
}

func TestRenameReplaces(t *testing.T) {
	t.Parallel()
	d, _ := openRoot(t)
	writeFile(t, d, "old", "old content")
	writeFile(t, d, "tmp", "new")
	// A read-only target, which Windows refuses to replace by itself.
	if err := fileio.Chmod(d, "old", 0o444); err != nil {
		t.Fatal(err)
	}
	if err := d.Rename("tmp", d, "old"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, d, "old"); got != "new" {
		t.Fatalf("after Rename: %q", got)
	}
	if _, err := d.Lstat("tmp"); !fileio.IsNotExist(err) {
		t.Fatalf("Lstat of the renamed name: got %v, want an IsNotExist error", err)
	}
}

// TestRenameDirNoReplace: a directory is renamed onto a free name, and
// never onto a taken one, not even an empty directory (which a plain
// rename replaces).
func TestRenameDirNoReplace(t *testing.T) {
	t.Parallel()
	if !fileio.CanStageDirs {
		t.Skip("skipping: directories are not staged on " + runtime.GOOS)
	}
	d, dir := openRoot(t)
	for _, name := range []string{".a.tmp", ".b.tmp", "taken"} {
		if err := d.Mkdir(name, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, d, "file", "x")
	for _, onto := range []string{"taken", "file"} {
		if err := fileio.RenameDirNoReplace(d, ".b.tmp", onto); !fileio.IsExist(err) {
			t.Errorf("renaming a directory onto %s: got %v, want an IsExist error", onto, err)
		}
	}
	if err := fileio.RenameDirNoReplace(d, ".a.tmp", "a"); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, "a")); err != nil || !st.IsDir() {
		t.Errorf("a after the rename: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".b.tmp")); err != nil {
		t.Errorf("the directory that could not be renamed is gone: %v", err)
	}
}

func TestRemoveReadOnly(t *testing.T) {
	t.Parallel()
	d, _ := openRoot(t)
	writeFile(t, d, "a", "x")
	f, err := d.Open("a", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Chmod(0o444); err != nil {
		t.Fatal(err)
	}
	f.Close()
	st, err := d.Lstat("a")
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode&0o200 != 0 {
		t.Fatalf("mode after Chmod(0444): %o", st.Mode)
	}
	if err := d.Remove("a"); err != nil {
		t.Fatal(err)
	}
	if err := d.Mkdir("sub", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove("sub"); err == nil {
		t.Fatal("Remove removed a directory")
	}
	if err := d.RemoveDir("sub"); err != nil {
		t.Fatal(err)
	}
}

func TestSyncAndTimesOnReadOnlyFile(t *testing.T) {
	t.Parallel()
	d, _ := openRoot(t)
	writeFile(t, d, "a", "x")
	if err := fileio.Chmod(d, "a", 0o444); err != nil {
		t.Fatal(err)
	}
	f, err := d.Open("a", false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatalf("Sync of a file open for reading: %v", err)
	}
	const mtime = 1_600_000_000_123_456_789
	if err := f.SetTimes(mtime, mtime); err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	// What each platform keeps of a time set through an open file.
	want := int64(mtime)
	switch runtime.GOOS {
	case "darwin":
		want -= mtime % 1000 // futimes(2): microseconds
	case "windows":
		want -= mtime % 100 // FILETIME: 100ns
	}
	if st.Mtime != want {
		t.Fatalf("Mtime: got %d, want %d", st.Mtime, want)
	}
	if st.Mode&0o200 != 0 {
		t.Fatalf("the read-only file became writable: %o", st.Mode)
	}
}

func TestLutimes(t *testing.T) {
	t.Parallel()
	d, _ := openRoot(t)
	writeFile(t, d, "a", "x")
	const mtime = 1_500_000_000_987_654_321
	if err := fileio.Lutimes(d, "a", mtime, mtime); err != nil {
		t.Fatal(err)
	}
	st, err := d.Lstat("a")
	if err != nil {
		t.Fatal(err)
	}
	want := int64(mtime)
	if runtime.GOOS == "windows" {
		want -= mtime % 100
	}
	if st.Mtime != want {
		t.Fatalf("Mtime: got %d, want %d", st.Mtime, want)
	}
}

func TestHardLinkIdentity(t *testing.T) {
	t.Parallel()
	d, _ := openRoot(t)
	writeFile(t, d, "a", "x")
	if err := d.Link(d, "a", "b"); err != nil {
		t.Fatal(err)
	}
	sa, err := d.Lstat("a")
	if err != nil {
		t.Fatal(err)
	}
	sb, err := d.Lstat("b")
	if err != nil {
		t.Fatal(err)
	}
	if sa.Dev != sb.Dev || sa.Ino != sb.Ino || sa.Nlink != 2 {
		t.Fatalf("two names of one file: %+v and %+v", sa, sb)
	}
	writeFile(t, d, "c", "x")
	sc, err := d.Lstat("c")
	if err != nil {
		t.Fatal(err)
	}
	if sc.Ino == sa.Ino {
		t.Fatalf("two files with one inode number: %+v and %+v", sa, sc)
	}
	// Dir.Stat tells directories apart (the -L loop check relies on it).
	if err := d.Mkdir("s1", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := d.Mkdir("s2", 0o755); err != nil {
		t.Fatal(err)
	}
	var inos []uint64
	for _, n := range []string{"s1", "s2"} {
		s, err := d.OpenSub(n)
		if err != nil {
			t.Fatal(err)
		}
		st, err := s.Stat()
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !st.IsDir() {
			t.Fatalf("%s: %+v", n, st)
		}
		inos = append(inos, st.Ino)
	}
	if inos[0] == inos[1] {
		t.Fatalf("two directories with one inode number %d", inos[0])
	}
}

func TestSymlinksAreNotFollowed(t *testing.T) {
	t.Parallel()
	d, dir := openRoot(t)
	if err := d.Mkdir("real", 0o755); err != nil {
		t.Fatal(err)
	}
	sub, err := d.OpenSub("real")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, sub, "f", "secret")
	sub.Close()
	symlink(t, d, "real", "link")
	symlink(t, d, filepath.Join("real", "f"), "flink")

	st, err := d.Lstat("link")
	if err != nil && runtime.GOOS == "windows" {
		t.Skipf("skipping: Symlink reported success and made no symlink (Wine makes none): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !st.IsSymlink() {
		t.Fatalf("Lstat of a symlink: mode %o", st.Mode)
	}
	if target, err := d.Readlink("link"); err != nil || target != "real" {
		t.Fatalf("Readlink: %q, %v", target, err)
	}
	if st, err := d.StatFollow("link"); err != nil || !st.IsDir() {
		t.Fatalf("StatFollow: %+v, %v", st, err)
	}
	if _, err := d.OpenSub("link"); err == nil {
		t.Fatal("OpenSub followed a symlink")
	}
	if _, err := d.OpenBeneath("link/x"); err == nil {
		t.Fatal("OpenBeneath followed a symlink")
	}
	if _, err := d.OpenBeneath("real/../.."); err == nil {
		t.Fatal("OpenBeneath left its root through ..")
	}
	if _, err := d.Open("flink", false); err == nil {
		t.Fatal("Open without follow opened through a symlink")
	}
	if _, err := fileio.CreateTemp(d, "flink"); !fileio.IsExist(err) {
		t.Fatalf("CreateTemp over a symlink: got %v, want an IsExist error", err)
	}
	if got := readFile(t, mustOpenBeneath(t, d, "real"), "f"); got != "secret" {
		t.Fatalf("read through OpenBeneath: %q", got)
	}
	// Removing the link leaves its target.
	if err := d.Remove("link"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "real", "f")); err != nil {
		t.Fatal(err)
	}
}

func mustOpenBeneath(t *testing.T, d *fileio.Dir, rel string) *fileio.Dir {
	t.Helper()
	s, err := d.OpenBeneath(rel)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestReadDir(t *testing.T) {
	t.Parallel()
	d, _ := openRoot(t)
	writeFile(t, d, "b", "")
	writeFile(t, d, "a", "")
	if err := d.Mkdir("c", 0o755); err != nil {
		t.Fatal(err)
	}
	des, err := d.ReadDir()
	if err != nil {
		t.Fatal(err)
	}
	want := []fileio.DirEntry{{Name: "a", Type: fileio.ModeRegular}, {Name: "b", Type: fileio.ModeRegular}, {Name: "c", Type: fileio.ModeDir}}
	if len(des) != len(want) {
		t.Fatalf("ReadDir: %+v", des)
	}
	for i := range want {
		if des[i].Name != want[i].Name || des[i].Type != want[i].Type {
			t.Fatalf("ReadDir: %+v, want %+v", des, want)
		}
		// Linux's listing carries each name's inode number (d_ino), for
		// stating names in inode order; elsewhere it is 0.
		if runtime.GOOS != "linux" {
			continue
		}
		st, err := d.Lstat(des[i].Name)
		if err != nil {
			t.Fatal(err)
		}
		if des[i].Ino == 0 || des[i].Ino != st.Ino {
			t.Fatalf("ReadDir: %q has inode %d, Lstat says %d", des[i].Name, des[i].Ino, st.Ino)
		}
	}
}

func TestLock(t *testing.T) {
	t.Parallel()
	d, dir := openRoot(t)
	if err := fileio.Lock(d); err != nil {
		t.Fatal(err)
	}
	d2, err := fileio.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := fileio.Lock(d2); !errors.Is(err, fileio.ErrLocked) {
		t.Fatalf("second Lock: got %v, want ErrLocked", err)
	}
	d2.Close()
	d.Close()
	d3, err := fileio.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d3.Close()
	if err := fileio.Lock(d3); err != nil {
		t.Fatalf("Lock after the holder closed: %v", err)
	}
}

// TestLockShared: shared locks coexist, and none with Lock; Parent walks up
// to the root, whose parent is itself. (Windows has no shared form.)
func TestLockShared(t *testing.T) {
	t.Parallel()
	_, dir := openRoot(t)
	open := func() *fileio.Dir {
		t.Helper()
		d, err := fileio.OpenDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	}
	a, b, c := open(), open(), open()
	if err := fileio.LockShared(a); errors.Is(err, fileio.ErrUnsupported) {
		t.Skipf("skipping: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	if err := fileio.LockShared(b); err != nil {
		t.Fatalf("a second shared lock: %v", err)
	}
	if err := fileio.Lock(c); !errors.Is(err, fileio.ErrLocked) {
		t.Fatalf("Lock beside shared locks: got %v, want ErrLocked", err)
	}
	a.Close()
	b.Close()
	if err := fileio.Lock(c); err != nil {
		t.Fatalf("Lock once the shared locks are gone: %v", err)
	}
	if err := fileio.LockShared(open()); !errors.Is(err, fileio.ErrLocked) {
		t.Fatalf("LockShared beside Lock: got %v, want ErrLocked", err)
	}

	cur := open()
	st, err := cur.Stat()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		up, err := cur.Parent()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { up.Close() })
		ust, err := up.Stat()
		if err != nil {
			t.Fatal(err)
		}
		if ust.Dev == st.Dev && ust.Ino == st.Ino {
			break // the root
		}
		if i == 200 {
			t.Fatal("Parent never reached the root")
		}
		cur, st = up, ust
	}
}

func TestFallbacks(t *testing.T) {
	t.Parallel()
	d, _ := openRoot(t)
	writeFile(t, d, "src", "data")
	src, err := d.Open("src", false)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := fileio.CreateTemp(d, "dst")
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	// Each primitive works or says "use the next one".
	if err := dst.Clone(src); err != nil && !fileio.IsFallback(err) {
		t.Fatalf("Clone: %v", err)
	}
	if _, err := dst.CopyRange(src, 0, 0, 4); err != nil && !fileio.IsFallback(err) {
		t.Fatalf("CopyRange: %v", err)
	}
	if _, _, err := src.NextData(0, 4); err != nil && !fileio.IsFallback(err) {
		t.Fatalf("NextData: %v", err)
	}
	if err := src.DropCache(); err != nil && !fileio.IsFallback(err) {
		t.Fatalf("DropCache: %v", err)
	}
	src.AdviseSequential()
	if err := fileio.CopyXattrs(src, dst, false); err != nil && !fileio.IsFallback(err) {
		t.Fatalf("CopyXattrs: %v", err)
	}
	if err := dst.Chown(-1, -1); err != nil {
		t.Fatalf("Chown(-1, -1): %v", err)
	}
	if s := fileio.DeviceOf(".").String(); s == "" {
		t.Fatal("DeviceOf: empty description")
	}
}

// TestCloseTwice: a second Close of a Dir returns os.ErrClosed and leaves
// alone the descriptor its number was given to since (before, it closed
// that one: another test's directory, under t.Parallel, or another file of
// the same run).
func TestCloseTwice(t *testing.T) {
	dir := t.TempDir()
	d1, err := fileio.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := d1.Close(); err != nil {
		t.Fatal(err)
	}
	d2, err := fileio.OpenDir(dir) // most likely given d1's old number
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	if err := d1.Close(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("second Close: %v, want os.ErrClosed", err)
	}
	if _, err := d2.Stat(); err != nil {
		t.Fatalf("a Dir opened after another was closed, once that one is closed again: %v", err)
	}
}
