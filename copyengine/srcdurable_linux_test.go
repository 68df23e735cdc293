package copyengine_test

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestSrcDurableMovePowerCut: a --move that exits 0 has made its removals
// durable. The source is an xfs filesystem with a second xfs mounted
// inside the source tree (SRC/inner), DEST a third; right after exit 0 all
// three lose power (xfs_io shutdown, the log lost) and are mounted again.
// No moved file, and no source directory the run removed, may be back in
// SRC, and every file must be whole in DEST. With --no-sync the removals
// may come back (that is what --no-sync leaves out), but every file must
// still be whole on one side at least.
func TestSrcDurableMovePowerCut(t *testing.T) {
	needCut(t)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	outer := loopfs.Mount(t, loopfs.Config{Type: "xfs", Size: 300 << 20})
	dstFS := loopfs.Mount(t, loopfs.Config{Type: "xfs", Size: 300 << 20})
	src, dst := outer.Path("DCIM"), dstFS.Path("Photos")
	innerDir := filepath.Join(src, "inner")
	noErr(t, os.MkdirAll(innerDir, 0o755))
	unix.Sync() // the mount point survives the cuts
	inner, err := loopfs.Attach(loopfs.Config{Type: "xfs", Size: 300 << 20}, filepath.Join(t.TempDir(), "inner.img"), innerDir)
	if err != nil {
		t.Skipf("skipping: cannot mount xfs inside the source: %v", err)
	}
	t.Cleanup(func() {
		if err := inner.Detach(); err != nil {
			t.Error(err)
		}
	})
	for _, noSync := range []bool{false, true} {
		t.Run(fmt.Sprintf("no-sync=%v", noSync), func(t *testing.T) {
			files := srcdurableTree(t, src, r)
			opt := copyengine.Options{Sources: []string{src}, Dest: dst, Move: true, NoSync: noSync}
			sum, err := runEngine(t, opt)
			if err != nil {
				t.Fatalf("the move failed: %v", err)
			}
			if sum.SourcesRemoved != int64(len(files)) {
				t.Fatalf("%d sources removed, want %d", sum.SourcesRemoved, len(files))
			}
			for _, f := range []*loopfs.FS{outer, inner, dstFS} {
				noErr(t, f.Cut(false))
			}
			// The inner filesystem is mounted on a directory of the outer:
			// unmounted first, mounted again after it.
			noErr(t, srcdurableRun("umount", inner.Dir))
			noErr(t, outer.Remount())
			noErr(t, dstFS.Remount())
			noErr(t, srcdurableRun("mount", "-t", inner.Type, inner.Dev, inner.Dir))

			back, backInner, onNeither := srcdurableSides(t, src, dst, files)
			dirsBack := srcdurableDirsBack(t, src, files)
			t.Logf("after the cut: %d of %d moved files back in SRC (%d of them on the filesystem mounted inside it), %d removed directories back, %d on neither side",
				back, len(files), backInner, len(dirsBack), onNeither)
			if onNeither > 0 {
				t.Errorf("%d files are whole on neither side after the cut", onNeither)
			}
			if !noSync {
				if back > 0 {
					t.Errorf("--move exited 0, yet after a power cut %d of %d moved files are back in SRC (%d of them on the filesystem mounted inside it)", back, len(files), backInner)
				}
				if len(dirsBack) > 0 {
					t.Errorf("--move exited 0, yet after a power cut %d directories it removed are back in SRC: %q", len(dirsBack), dirsBack[:min(5, len(dirsBack))])
				}
			}
			// The rerun finishes whatever came back.
			opt.NoSync = false
			if _, err := runEngine(t, opt); err != nil {
				t.Fatalf("the rerun failed: %v", err)
			}
			if back, _, onNeither := srcdurableSides(t, src, dst, files); back != 0 || onNeither != 0 {
				t.Errorf("after the rerun %d files are still in SRC, %d on neither side", back, onNeither)
			}
			noErr(t, os.RemoveAll(dst))
		})
	}
}

// srcdurableTree writes a card-like tree under src: files in nested
// directories on the outer filesystem, some in directories the move
// empties, and files on the filesystem mounted at src/inner. It returns
// the files by path relative to src.
func srcdurableTree(t *testing.T, src string, r *rand.Rand) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for i := 0; i < 900; i++ {
		dir := fmt.Sprintf("1%02d_CANON", i%6)
		if i%5 == 0 {
			dir = filepath.Join(dir, fmt.Sprintf("burst%d", i%3))
		}
		if i%9 == 0 {
			dir = filepath.Join("inner", fmt.Sprintf("clip%d", i%2))
		}
		rel := filepath.Join(dir, fmt.Sprintf("IMG_%04d.JPG", i))
		files[rel] = pattern(r.Int63(), 1+r.Intn(12<<10))
	}
	writeFiles(t, src, files)
	unix.Sync() // the tree is on the devices before the run: only the run's removals can be lost
	settleSources()
	return files
}

// srcdurableSides counts, of files, those in SRC (and of those, the ones
// under src/inner) and those whole on neither side; a file is taken for
// moved when DEST holds it whole.
func srcdurableSides(t *testing.T, src, dst string, files map[string][]byte) (inSrc, inInner, onNeither int) {
	t.Helper()
	for rel, want := range files {
		got, derr := os.ReadFile(filepath.Join(dst, rel))
		inDst := derr == nil && bytes.Equal(got, want)
		sgot, serr := os.ReadFile(filepath.Join(src, rel))
		switch {
		case serr == nil:
			inSrc++
			if strings.HasPrefix(rel, "inner/") {
				inInner++
			}
			if !inDst && !bytes.Equal(sgot, want) {
				onNeither++
			}
		case !inDst:
			onNeither++
		}
	}
	return inSrc, inInner, onNeither
}

// srcdurableDirsBack lists the directories of SRC that hold a moved file
// but for the source root and the mount point src/inner, which the run
// keeps: after a move that exited 0 they are gone.
func srcdurableDirsBack(t *testing.T, src string, files map[string][]byte) []string {
	t.Helper()
	seen := map[string]bool{}
	for rel := range files {
		for d := filepath.Dir(rel); d != "." && d != "inner"; d = filepath.Dir(d) {
			seen[d] = true
		}
	}
	var back []string
	for d := range seen {
		if _, err := os.Lstat(filepath.Join(src, d)); err == nil {
			back = append(back, d)
		} else if !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	sort.Strings(back)
	return back
}

// srcdurableRun runs a command (mount, umount) and returns its error with
// its output.
func srcdurableRun(name string, args ...string) error {
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}
