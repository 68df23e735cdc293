package copyengine_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// A FUSE driver on libfuse's high-level API without use_ino (exfat-fuse)
// numbers its inodes itself, as it hands them to the kernel: once the
// kernel forgets an inode (memory pressure, drop_caches), the next lookup
// of the same file gets a new number. The tests below run --move from and
// copies onto such drives while the kernel is made to forget, and ask that
// no file fails for it, and that a file really replaced still does.

// inorenumDropCaches makes the kernel forget its dentries and inodes
// (echo 2 > /proc/sys/vm/drop_caches) every few milliseconds until the
// returned function is called; it returns how many times it did. It skips
// the test where that cannot be written.
func inorenumDropCaches(t *testing.T) (stop func() int) {
	t.Helper()
	const ctl = "/proc/sys/vm/drop_caches"
	if err := os.WriteFile(ctl, []byte("2"), 0); err != nil {
		if os.Getenv(loopfs.RequireEnv) != "" {
			t.Fatalf("cannot write %s: %v (and %s is set)", ctl, err, loopfs.RequireEnv)
		}
		t.Skipf("skipping: cannot write %s (needs root outside a container): %v", ctl, err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	n := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(3 * time.Millisecond):
			}
			if os.WriteFile(ctl, []byte("2"), 0) == nil {
				n++
			}
		}
	}()
	var once sync.Once
	stop = func() int {
		once.Do(func() { close(done); wg.Wait() })
		return n
	}
	t.Cleanup(func() { stop() })
	return stop
}

// inorenumFiles writes n small files of distinct content under root in a
// few directories, and returns them by relative path.
func inorenumFiles(t *testing.T, root string, n int, seed int64) map[string][]byte {
	t.Helper()
	files := make(map[string][]byte, n)
	for i := 0; i < n; i++ {
		rel := filepath.Join(fmt.Sprintf("d%d", i%4), fmt.Sprintf("IMG_%04d.JPG", i))
		files[rel] = pattern(seed*1_000_003+int64(i), 512+i%7*700)
	}
	writeFiles(t, root, files)
	settleSources()
	return files
}

// inorenumFailures describes the failures of a run: how many of each
// kind (the message with its quoted names left out), with one example each.
func inorenumFailures(ev *events) string {
	kinds := map[string]int{}
	example := map[string]string{}
	for p, err := range ev.failures() {
		k := inorenumQuoted.ReplaceAllString(err.Error(), "%q")
		kinds[k]++
		if example[k] == "" || p < example[k] {
			example[k] = p
		}
	}
	var lines []string
	for k, n := range kinds {
		lines = append(lines, fmt.Sprintf("  %d x %s (e.g. %s)", n, k, example[k]))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

var inorenumQuoted = regexp.MustCompile(`"[^"]*"`)

// inorenumDrivers are the FUSE drivers the tests run on.
var inorenumDrivers = []struct {
	name string
	cfg  loopfs.FUSEConfig
}{
	{"exfat-fuse", loopfs.ExFAT(64 << 20)},
	{"ntfs-3g", loopfs.NTFS(64 << 20)},
}

const (
	inorenumRuns  = 4   // runs per driver and direction
	inorenumFileN = 400 // files per run
)

// TestInorenumMoveFromFUSE moves a card's files off exfat-fuse and
// ntfs-3g while the kernel forgets inodes: every source is removed, every
// copy is complete, and the run succeeds.
func TestInorenumMoveFromFUSE(t *testing.T) {
	for _, drv := range inorenumDrivers {
		t.Run(drv.name, func(t *testing.T) {
			fs := loopfs.MountFUSE(t, drv.cfg)
			stop := inorenumDropCaches(t)
			stop()
			inorenumCheckRenumbers(t, drv.name, fs.Dir)
			failed, runs := 0, 0
			for run := 0; run < inorenumRuns; run++ {
				src := fs.Path(fmt.Sprintf("card%d", run))
				files := inorenumFiles(t, src, inorenumFileN, int64(run))
				dst := scratchDir(t)
				var ev events
				stop := inorenumDropCaches(t)
				sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Move: true, OnEvent: ev.record})
				drops := stop()
				runs++
				if err != nil {
					failed++
					t.Errorf("run %d (%d cache drops): --move: %v; %d failures, %d sources removed of %d:\n%s",
						run, drops, err, sum.Failed, sum.SourcesRemoved, len(files), inorenumFailures(&ev))
				}
				for rel, data := range files {
					got, rerr := os.ReadFile(filepath.Join(dst, rel))
					if rerr != nil || string(got) != string(data) {
						if _, serr := os.Stat(filepath.Join(src, rel)); serr != nil {
							t.Fatalf("run %d: %s is neither complete in DEST (%v) nor kept in SRC (%v)", run, rel, rerr, serr)
						}
						t.Errorf("run %d: %s not copied whole: %v", run, rel, rerr)
					}
				}
				if err == nil && sum.SourcesRemoved != int64(len(files)) {
					t.Errorf("run %d: %d sources removed, want %d", run, sum.SourcesRemoved, len(files))
				}
			}
			t.Logf("%s: %d of %d runs failed", drv.name, failed, runs)
		})
	}
}

// TestInorenumCopyToFUSE copies onto exfat-fuse and ntfs-3g while the
// kernel forgets inodes: no file fails, and every copy is complete.
func TestInorenumCopyToFUSE(t *testing.T) {
	for _, drv := range inorenumDrivers {
		t.Run(drv.name, func(t *testing.T) {
			fs := loopfs.MountFUSE(t, drv.cfg)
			inorenumDropCaches(t)()
			inorenumCheckRenumbers(t, drv.name, fs.Dir)
			src := scratchDir(t)
			files := inorenumFiles(t, src, inorenumFileN, 7)
			failed := 0
			for run := 0; run < inorenumRuns; run++ {
				dst := fs.Path(fmt.Sprintf("copy%d", run))
				var ev events
				stop := inorenumDropCaches(t)
				sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, OnEvent: ev.record})
				drops := stop()
				if err != nil {
					failed++
					t.Errorf("run %d (%d cache drops): copy: %v; %d failures of %d:\n%s", run, drops, err, sum.Failed, len(files), inorenumFailures(&ev))
					if errors.Is(err, copyengine.ErrMismatch) && sum.Copied+sum.Failed != int64(len(files)) {
						t.Errorf("run %d: %d copied and %d failed of %d", run, sum.Copied, sum.Failed, len(files))
					}
				}
				if n := finalFilesMatch(t, src, dst); err == nil && n != len(files) {
					t.Errorf("run %d: %d files in DEST, want %d", run, n, len(files))
				}
				_ = os.RemoveAll(dst)
			}
			t.Logf("%s: %d of %d runs failed", drv.name, failed, inorenumRuns)
		})
	}
}

// inorenumRenumbers reports whether the drop loop makes the filesystem of
// dir give a file another inode number: a file's number is looked up,
// the kernel made to forget, and looked up again. On exfat-fuse it must
// (or the tests above prove nothing there); ntfs-3g numbers its files by
// their MFT records, which last.
func inorenumRenumbers(t *testing.T, dir string) bool {
	t.Helper()
	p := filepath.Join(dir, "inorenum-probe")
	writeFile(t, p, []byte("probe"))
	defer os.Remove(p)
	var before, after unix.Stat_t
	if err := unix.Lstat(p, &before); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("2"), 0); err != nil {
			t.Fatal(err)
		}
		if err := unix.Lstat(p, &after); err != nil {
			t.Fatal(err)
		}
		if after.Ino != before.Ino {
			return true
		}
	}
	return false
}

// inorenumCheckRenumbers fails the test when the drop loop does not make
// exfat-fuse renumber its inodes, and logs what it does on the others.
func inorenumCheckRenumbers(t *testing.T, name, dir string) {
	t.Helper()
	renumbers := inorenumRenumbers(t, dir)
	t.Logf("%s: the kernel forgetting an inode gives it another number: %v", name, renumbers)
	if name == "exfat-fuse" && !renumbers {
		t.Errorf("exfat-fuse kept its inode numbers across drop_caches: this test does not show what it is meant to")
	}
}

// TestInorenumMoveKeepsChangedSourceExfat: on exfat-fuse, whose inode
// numbers do not last, a --move source rewritten after its copy with its
// size and mtime put back, and one replaced by another file of the same
// size and mtime, are kept (their content is not the copy's), while the
// kernel forgets inodes; the others are moved.
func TestInorenumMoveKeepsChangedSourceExfat(t *testing.T) {
	fs := loopfs.MountFUSE(t, loopfs.ExFAT(64<<20))
	stop := inorenumDropCaches(t)
	stop()
	src := fs.Path("card")
	files := inorenumFiles(t, src, 200, 11)
	rewritten, replaced := filepath.Join("d1", "IMG_0001.JPG"), filepath.Join("d2", "IMG_0002.JPG")
	theirs := map[string][]byte{}
	var hostileErr error
	var mu sync.Mutex
	hostile := func(rel string) {
		p := filepath.Join(src, rel)
		st, err := os.Stat(p)
		if err != nil {
			hostileErr = err
			return
		}
		data := append([]byte(nil), files[rel]...)
		data[len(data)/2] ^= 0xff // same size, other content
		theirs[rel] = data
		if rel == rewritten {
			err = os.WriteFile(p, data, 0o644)
		} else {
			other := p + ".other"
			if err = os.WriteFile(other, data, 0o644); err == nil {
				err = os.Rename(other, p)
			}
		}
		if err == nil {
			err = os.Chtimes(p, st.ModTime(), st.ModTime())
		}
		if err != nil {
			hostileErr = err
		}
	}
	var ev events
	record := func(e copyengine.Event) {
		ev.record(e)
		if e.Action == copyengine.ActCopy && (e.Path == rewritten || e.Path == replaced) {
			mu.Lock()
			hostile(e.Path) // after its copy was verified and placed, before the sources are removed
			mu.Unlock()
		}
	}
	dst := scratchDir(t)
	stop = inorenumDropCaches(t)
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Move: true, OnEvent: record})
	drops := stop()
	if hostileErr != nil || len(theirs) != 2 {
		t.Fatalf("the sources were not changed after their copy (%d of 2): %v", len(theirs), hostileErr)
	}
	if !errors.Is(err, copyengine.ErrSomeFailed) {
		t.Errorf("--move (%d cache drops): %v, want %v for the two sources changed", drops, err, copyengine.ErrSomeFailed)
	}
	fails := ev.failures()
	for rel, data := range theirs {
		if fe := fails[rel]; fe == nil || !strings.Contains(fe.Error(), "changed since it was copied") {
			t.Errorf("%s, changed after its copy: failure %v, want it kept as changed since it was copied", rel, fe)
		}
		if got, err := os.ReadFile(filepath.Join(src, rel)); err != nil || string(got) != string(data) {
			t.Errorf("%s, changed after its copy, was not kept in the source: %v", rel, err)
		}
	}
	if len(fails) != 2 {
		t.Errorf("%d failures, want the 2 changed sources:\n%s", len(fails), inorenumFailures(&ev))
	}
	if want := int64(len(files) - 2); sum.SourcesRemoved != want {
		t.Errorf("%d sources removed, want %d", sum.SourcesRemoved, want)
	}
	for rel, data := range files {
		if got, err := os.ReadFile(filepath.Join(dst, rel)); err != nil || string(got) != string(data) {
			t.Errorf("%s: its copy is not the source that was read: %v", rel, err)
		}
	}
}
