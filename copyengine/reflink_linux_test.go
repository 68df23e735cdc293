package copyengine_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// reflinkFilesystems are the filesystems that clone: a file copied within
// one of them with --reflink auto must share its source's blocks.
var reflinkFilesystems = []loopfs.Config{
	{Type: "xfs", Size: 320 << 20, Mkfs: []string{"-m", "reflink=1"}},
	{Type: "btrfs", Size: 256 << 20},
}

// TestReflink copies within xfs and btrfs, which clone. With --reflink auto
// (and always) every file is a clone: FIEMAP marks all of its extents
// shared, the summary counts it, it is read back, and writing to it leaves
// its source alone. With --reflink never no block is shared, whatever the
// --verify mode. From another filesystem auto copies and always refuses.
func TestReflink(t *testing.T) {
	t.Parallel()
	for _, c := range reflinkFilesystems {
		t.Run(c.Type, func(t *testing.T) {
			fs := loopfs.Mount(t, c)
			src := fs.Path("src")
			files := map[string][]byte{
				"big":       pattern(1, 8<<20+123), // not a multiple of the block size
				"dir/small": pattern(2, 5000),      // above btrfs's inline limit, so it has an extent to share
			}
			writeFiles(t, src, files)

			for _, v := range []copyengine.VerifyMode{copyengine.VerifyDevice, copyengine.VerifyOff} {
				t.Run("auto/verify="+string(v), func(t *testing.T) {
					dst := fs.Path("auto-" + string(v))
					sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Reflink: copyengine.ReflinkAuto, Verify: v})
					if err != nil {
						t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
					}
					if sum.Copied != 2 || sum.Cloned != 2 {
						t.Errorf("copied %d, cloned %d; want both files cloned", sum.Copied, sum.Cloned)
					}
					if v == copyengine.VerifyDevice && sum.Verified != 2 {
						t.Errorf("verified %d files, want the 2 clones read back", sum.Verified)
					}
					for rel, data := range files {
						shared, mapped := extentBytes(t, filepath.Join(dst, rel))
						if mapped < int64(len(data)) || shared != mapped {
							t.Errorf("%s: %d of %d mapped bytes shared; a clone shares them all", rel, shared, mapped)
						}
					}
					sameTree(t, src, dst)
				})
			}

			t.Run("edit clone", func(t *testing.T) {
				dst := fs.Path("edit")
				if _, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst}); err != nil {
					t.Fatal(err)
				}
				// Write into the middle of the clone: copy-on-write must give it
				// blocks of its own and leave the source as it was.
				clone := filepath.Join(dst, "big")
				f, err := os.OpenFile(clone, os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.WriteAt([]byte("edited in the clone"), 4<<20); err != nil {
					t.Fatal(err)
				}
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
				if shared, mapped := extentBytes(t, clone); shared == mapped {
					t.Errorf("the edited clone still shares all of its %d bytes", mapped)
				}
				orig, err := os.ReadFile(filepath.Join(src, "big"))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(orig, files["big"]) {
					t.Fatal("editing the clone changed the source")
				}
				got, _ := os.ReadFile(clone)
				if !bytes.Contains(got, []byte("edited in the clone")) {
					t.Error("the edit did not reach the clone")
				}
			})

			for _, v := range []copyengine.VerifyMode{copyengine.VerifyDevice, copyengine.VerifyOff} {
				// With --verify off the engine would be free to use
				// copy_file_range, which xfs and btrfs turn into a clone
				// without saying so: --reflink never must not use it.
				t.Run("never/verify="+string(v), func(t *testing.T) {
					dst := fs.Path("never-" + string(v))
					sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Reflink: copyengine.ReflinkNever, Verify: v})
					if err != nil {
						t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
					}
					if sum.Copied != 2 || sum.Cloned != 0 {
						t.Errorf("copied %d, cloned %d; want 2 copies and no clone", sum.Copied, sum.Cloned)
					}
					for rel := range files {
						if shared, mapped := extentBytes(t, filepath.Join(dst, rel)); shared != 0 {
							t.Errorf("%s: %d of %d bytes share blocks with another file under --reflink never", rel, shared, mapped)
						}
					}
					sameTree(t, src, dst)
				})
			}

			t.Run("always", func(t *testing.T) {
				dst := fs.Path("always")
				sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Reflink: copyengine.ReflinkAlways})
				if err != nil {
					t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
				}
				if sum.Cloned != 2 {
					t.Errorf("cloned %d, want 2", sum.Cloned)
				}
				sameTree(t, src, dst)
			})

			if c.Type == "btrfs" {
				t.Run("one file that cannot clone", func(t *testing.T) {
					// btrfs refuses to clone a NOCOW file into a COW one
					// (EINVAL). That is about the file: the files after it
					// must still be cloned.
					src := fs.Path("src-nocow")
					writeFile(t, filepath.Join(src, "a-nocow"), nil)
					setNoCOW(t, filepath.Join(src, "a-nocow"))
					writeFile(t, filepath.Join(src, "a-nocow"), pattern(6, 100000))
					for _, name := range []string{"b", "c", "d"} {
						writeFile(t, filepath.Join(src, name), pattern(int64(name[0]), 100000))
					}
					dst := fs.Path("dst-nocow")
					// One worker: the NOCOW file, first by name, goes first.
					sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Jobs: 1})
					if err != nil {
						t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
					}
					if sum.Copied != 4 || sum.Cloned != 3 {
						t.Errorf("copied %d, cloned %d; want the 3 other files cloned", sum.Copied, sum.Cloned)
					}
					sameTree(t, src, dst)
				})
			}

			t.Run("other filesystem", func(t *testing.T) {
				// From another filesystem there is nothing to share: auto
				// copies, always refuses.
				other := filepath.Join(scratchDir(t), "src")
				writeFile(t, filepath.Join(other, "f"), pattern(3, 100000))
				sum, err := runEngine(t, copyengine.Options{Sources: []string{other}, Dest: fs.Path("from-other-auto")})
				if err != nil || sum.Copied != 1 || sum.Cloned != 0 {
					t.Errorf("auto across filesystems: err %v, copied %d, cloned %d; want one plain copy", err, sum.Copied, sum.Cloned)
				}
				dst := fs.Path("from-other-always")
				sum, err = runEngine(t, copyengine.Options{Sources: []string{other}, Dest: dst, Reflink: copyengine.ReflinkAlways})
				if !errors.Is(err, copyengine.ErrSomeFailed) || len(sum.Failures) != 1 {
					t.Fatalf("always across filesystems: err %v, failures %v; want the file to fail", err, sum.Failures)
				}
				if msg := sum.Failures[0].Err; !strings.Contains(msg, "reflink") {
					t.Errorf("failure %q does not say it is about cloning", msg)
				}
				if _, err := os.Lstat(filepath.Join(dst, "f")); err == nil {
					t.Error("the file that could not be cloned exists under its final name")
				}
				noTemps(t, dst)
			})
		})
	}
}

// TestReflinkAlwaysUnsupported: on ext4, which cannot clone, --reflink
// always fails each file with an error that says why, and writes nothing.
func TestReflinkAlwaysUnsupported(t *testing.T) {
	t.Parallel()
	fs := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 64 << 20})
	src := fs.Path("src")
	writeFile(t, filepath.Join(src, "a"), pattern(4, 70000))
	writeFile(t, filepath.Join(src, "b"), pattern(5, 3))
	dst := fs.Path("dst")
	var ev events
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Reflink: copyengine.ReflinkAlways, OnEvent: ev.record})
	if !errors.Is(err, copyengine.ErrSomeFailed) {
		t.Fatalf("Run returned %v, want ErrSomeFailed", err)
	}
	if sum.Failed != 2 || sum.Copied != 0 || len(sum.Failures) != 2 {
		t.Fatalf("failed %d, copied %d, failures %v; want both files failed", sum.Failed, sum.Copied, sum.Failures)
	}
	for _, f := range sum.Failures {
		// The summary (what --json reports) must keep the reason, not only
		// the errno: "operation not supported" alone does not say that
		// cloning was asked for.
		if !strings.Contains(f.Err, "--reflink=always") || !strings.Contains(f.Err, "not supported") {
			t.Errorf("failure of %s reads %q; want it to name --reflink=always and the missing support", f.Path, f.Err)
		}
	}
	for p, e := range ev.failures() {
		if !strings.Contains(e.Error(), "--reflink=always") {
			t.Errorf("failure event of %s: %v", p, e)
		}
	}
	for _, name := range []string{"a", "b"} {
		if _, err := os.Lstat(filepath.Join(dst, name)); err == nil {
			t.Errorf("%s exists under its final name though it could not be cloned", name)
		}
	}
	noTemps(t, fs.Dir)
}

// setNoCOW sets the NOCOW attribute (chattr +C) on the empty file path.
func setNoCOW(t *testing.T, path string) {
	t.Helper()
	const fsNocowFl = 0x00800000 // FS_NOCOW_FL
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	flags, err := unix.IoctlGetInt(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err == nil {
		err = unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, flags|fsNocowFl)
	}
	if err != nil {
		t.Fatalf("setting NOCOW on %s: %v", path, err)
	}
}
