package copyengine_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/hashcache"
)

const tempSuffix = ".fastcopy-tmp"

// madeRecordName is the record of the temporaries a run made, in the
// destination root while one is there to remove or take up.
const madeRecordName = ".fastcopy-made"

// runEngine runs the engine under a deadline, so that a hang fails this test
// with a message instead of the whole binary.
//
// FASTCOPY_TEST_ORDER=disk (or inode) runs every test that does not choose
// a read order in that one, and FASTCOPY_TEST_READ_WINDOW=N with windows of
// at most N files (unless the test sets its own): the suite then checks the ordered walk and window
// against everything the listing order is checked for.
func runEngine(t *testing.T, opt copyengine.Options) (copyengine.Summary, error) {
	t.Helper()
	if o := os.Getenv("FASTCOPY_TEST_ORDER"); o != "" && opt.ReadOrder == "" {
		opt.ReadOrder = copyengine.ReadOrder(o)
	}
	if n, err := strconv.Atoi(os.Getenv("FASTCOPY_TEST_READ_WINDOW")); err == nil && n > 0 && copyengine.ReadWindowFiles(&opt) == 0 {
		copyengine.SetReadWindowFiles(&opt, n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return copyengine.Run(ctx, opt)
}

// events collects the events of a run; its record method is an OnEvent.
type events struct {
	mu  sync.Mutex
	all []copyengine.Event
}

func (ev *events) record(e copyengine.Event) {
	ev.mu.Lock()
	ev.all = append(ev.all, e)
	ev.mu.Unlock()
}

// failures returns the failure events by path.
func (ev *events) failures() map[string]error {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	out := map[string]error{}
	for _, e := range ev.all {
		if e.Action == copyengine.ActFail {
			out[e.Path] = e.Err
		}
	}
	return out
}

var (
	noiseOnce sync.Once
	noise     []byte
)

// pattern returns n bytes of reproducible noise for seed: a stretch of one
// block of random bytes (generating fresh noise for every file is slow under
// -race), starting at a place chosen by seed, with the seed mixed into its
// first bytes so that files of different seeds differ.
func pattern(seed int64, n int) []byte {
	noiseOnce.Do(func() {
		noise = make([]byte, 8<<20+7) // odd, so long files do not repeat on block boundaries
		rand.New(rand.NewSource(1)).Read(noise)
	})
	b := make([]byte, n)
	off := int(uint64(seed)*0x9E3779B97F4A7C15>>40) % len(noise)
	for i := 0; i < n; {
		i += copy(b[i:], noise[off:])
		off = 0
	}
	for i := 0; i < 8 && i < n; i++ {
		b[i] ^= byte(seed >> (8 * i))
	}
	return b
}

// writeSmallFiles writes n files of 4 KiB, dir/name(i), then waits past
// the engine's settling window (a file changed within 50 ms of its read is
// read again), so that a run reads each once. Write other files first.
func writeSmallFiles(t *testing.T, dir string, n int, name func(i int) string) {
	t.Helper()
	for i := 0; i < n; i++ {
		writeFile(t, filepath.Join(dir, name(i)), pattern(int64(i), 4096))
	}
	time.Sleep(100 * time.Millisecond)
}

func flatName(i int) string { return fmt.Sprintf("f%02d", i) }

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeFiles writes each file of files (relative path: content) under
// root, making the directories it needs.
func writeFiles(t testing.TB, root string, files map[string][]byte) {
	t.Helper()
	for rel, data := range files {
		writeFile(t, filepath.Join(root, rel), data)
	}
}

// genTree writes a random tree under root: n regular files spread over
// nested directories, most of them small, some empty, every hundredth 1 to
// 2 MiB. It returns the relative paths and contents.
func genTree(t testing.TB, root string, n int, seed int64) map[string][]byte {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	files := make(map[string][]byte, n)
	dirs := []string{""}
	for i := 0; i < n; i++ {
		if r.Intn(12) == 0 && len(dirs) < n/8+2 {
			parent := dirs[r.Intn(len(dirs))]
			if strings.Count(parent, "/") < 4 {
				dirs = append(dirs, filepath.Join(parent, "d"+strconv.Itoa(len(dirs))))
			}
		}
		var size int
		switch {
		case i%100 == 99:
			size = 1<<20 + r.Intn(1<<20)
		case r.Intn(10) == 0:
			size = 0
		default:
			size = 1 + r.Intn(16<<10)
		}
		rel := filepath.Join(dirs[r.Intn(len(dirs))], "f"+strconv.Itoa(i))
		data := pattern(seed*1_000_003+int64(i), size)
		writeFile(t, filepath.Join(root, rel), data)
		files[rel] = data
	}
	return files
}

// noTemps fails the test for every temporary left anywhere under root.
func noTemps(t testing.TB, root string) {
	t.Helper()
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Errorf("walking %s: %v", p, err)
			return nil
		}
		if strings.HasSuffix(d.Name(), tempSuffix) {
			t.Errorf("temporary left behind: %s", p)
		}
		return nil
	})
}

// finalFilesMatch checks that every regular file under dst is complete: equal
// to its counterpart under src. It returns how many it checked.
func finalFilesMatch(t testing.TB, src, dst string) int {
	t.Helper()
	n := 0
	_ = filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Errorf("walking %s: %v", p, err)
			return nil
		}
		if d.IsDir() && strings.HasSuffix(d.Name(), tempSuffix) {
			return fs.SkipDir // a staged directory: nothing in it is in place
		}
		if !d.Type().IsRegular() || strings.HasSuffix(d.Name(), tempSuffix) {
			return nil
		}
		rel, _ := filepath.Rel(dst, p)
		if rel == madeRecordName {
			return nil // the record of what the run made there, left by one that stopped
		}
		want, err := os.ReadFile(filepath.Join(src, rel))
		if err != nil {
			t.Errorf("%s is in the destination but not readable in the source: %v", rel, err)
			return nil
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("reading the copy %s: %v", rel, err)
			return nil
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s under its final name differs from its source (%d bytes, source %d)", rel, len(got), len(want))
		}
		n++
		return nil
	})
	return n
}

// sameTree checks that dst holds every entry of src with the same type,
// content (regular files) and target (symlinks), and nothing else.
func sameTree(t testing.TB, src, dst string) {
	t.Helper()
	seen := map[string]bool{}
	_ = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Errorf("walking %s: %v", p, err)
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		seen[rel] = true
		q := filepath.Join(dst, rel)
		st, err := os.Lstat(q)
		if err != nil {
			t.Errorf("missing from the copy: %s", rel)
			return nil
		}
		if st.Mode().Type() != d.Type() {
			t.Errorf("%s: type %v in the copy, %v in the source", rel, st.Mode().Type(), d.Type())
			return nil
		}
		switch {
		case d.Type().IsRegular():
			a, _ := os.ReadFile(p)
			b, _ := os.ReadFile(q)
			if !bytes.Equal(a, b) {
				t.Errorf("%s: content differs (%d bytes, source %d)", rel, len(b), len(a))
			}
		case d.Type()&fs.ModeSymlink != 0:
			a, _ := os.Readlink(p)
			b, _ := os.Readlink(q)
			if a != b {
				t.Errorf("%s: symlink to %q, source to %q", rel, b, a)
			}
		}
		return nil
	})
	_ = filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dst, p)
		if !seen[rel] {
			t.Errorf("in the copy but not in the source: %s", rel)
		}
		return nil
	})
}

// runCached runs the engine with a hash cache at db opened and closed
// around the run, as the command line does; a warning from the cache fails
// the test.
func runCached(t *testing.T, db string, opt copyengine.Options) (copyengine.Summary, error) {
	t.Helper()
	hc, err := hashcache.Open(db, hashcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opt.Cache = hc
	sum, err := runEngine(t, opt)
	if cerr := hc.Close(); cerr != nil {
		t.Errorf("closing the cache: %v", cerr)
	}
	for _, w := range hc.Warnings() {
		t.Errorf("cache warning: %v", w)
	}
	return sum, err
}

// settleSources waits out the settle window (50 ms): a source whose ctime
// is more recent when it is read is read again later, and a duplicate read
// too early for its digest is copied instead of shared.
func settleSources() { time.Sleep(80 * time.Millisecond) }

// oldTime is the mtime the dedup tests give their sources: far enough in the
// past that the hash cache trusts entries of files carrying it.
var oldTime = time.Date(2021, 6, 1, 10, 0, 0, 123456789, time.UTC)

func setTimes(t testing.TB, path string, mtime time.Time) {
	t.Helper()
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func noErr(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
