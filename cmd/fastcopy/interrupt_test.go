//go:build linux

package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/internal/treecmp"
)

// These tests run the real binary, built by the test, and stop it the
// hard way: SIGKILL at random moments (a crash, an OOM kill, a pulled
// plug as far as the process can tell), SIGINT and SIGTERM.

// buildFastcopy builds the command into a directory of the test and returns
// the binary's path. The directory can be read by every user (for tests
// that run it as nobody).
func buildFastcopy(t *testing.T, tags ...string) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("skipping: no go command to build the binary with: %v", err)
	}
	dir := reachableTempDir(t)
	bin := filepath.Join(dir, "fastcopy")
	args := []string{"build", "-o", bin}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	out, err := exec.Command(goCmd, append(args, ".")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// scratchFS returns a directory on a filesystem of the test's own: an ext4
// image, loop-mounted, where the test runs as root with mkfs.ext4 and mount
// (t.TempDir() elsewhere). The image is kept in memory (/dev/shm) when
// there is room, and deleted blocks are given back (discard): the copies
// flush and read back a real filesystem, but wait for the copier, not for
// the machine's disk and whatever else is writing to it.
func scratchFS(t *testing.T, size int64) string {
	t.Helper()
	dir := reachableTempDir(t)
	if os.Geteuid() != 0 {
		t.Logf("not root: the trees are in %s", dir)
		return dir
	}
	for _, c := range []string{"mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Logf("%s not found: the trees are in %s", c, dir)
			return dir
		}
	}
	imgDir := dir
	var fs syscall.Statfs_t
	if err := syscall.Statfs("/dev/shm", &fs); err == nil && int64(fs.Bavail)*fs.Bsize > 2*size {
		d, err := os.MkdirTemp("/dev/shm", "fastcopy-test-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		imgDir = d
	}
	img, mnt := filepath.Join(imgDir, "scratch.img"), filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(img)
	if err == nil {
		err = f.Truncate(size)
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", img).CombinedOutput(); err != nil {
		t.Logf("mkfs.ext4: %v: %s; the trees are in %s", err, out, dir)
		return dir
	}
	if out, err := exec.Command("mount", "-o", "loop,discard", img, mnt).CombinedOutput(); err != nil {
		t.Logf("mount -o loop: %v: %s; the trees are in %s", err, out, dir)
		return dir
	}
	t.Cleanup(func() { unmountScratch(t, mnt) })
	if err := os.Chmod(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	return mnt
}

// reachableTempDir returns a new temporary directory of the test that every
// user can reach (t.TempDir's are private to root), for tests that run the
// copier as nobody.
func reachableTempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// treeSpec says what makeTree writes.
type treeSpec struct {
	bytes int64 // about this much data in all
	seed  int64
}

// srcTree is what makeTree wrote, to check copies against without reading
// the source again.
type srcTree struct {
	root     string
	dirs     map[string]bool
	files    map[string][sha256.Size]byte // regular files (hard links too)
	symlinks map[string]string
	shared   map[string]bool // duplicates and their originals: the copy may share their data
}

// makeTree writes a tree of many files under root, most of 1 to 64 KiB,
// every 40th of 1 to 4 MiB, in nested directories, with some symlinks,
// hard links and duplicates (other files with the same content, mode and
// mtime, which the copy may place by sharing data), until about spec.bytes
// are written.
func makeTree(t *testing.T, root string, spec treeSpec) *srcTree {
	t.Helper()
	tr := &srcTree{root: root, dirs: map[string]bool{".": true}, files: map[string][sha256.Size]byte{}, symlinks: map[string]string{}, shared: map[string]bool{}}
	r := rand.New(rand.NewSource(spec.seed))
	noise := make([]byte, 8<<20+13)
	r.Read(noise)
	var total int64
	var files []string
	for n := 0; total < spec.bytes; n++ {
		size := 1<<10 + r.Intn(63<<10)
		if n%40 == 39 {
			size = 1<<20 + r.Intn(3<<20)
		}
		dir := filepath.Join("d"+strconv.Itoa(n%17), "e"+strconv.Itoa(n%5))
		if n%3 == 0 {
			dir = filepath.Join(dir, "f"+strconv.Itoa(n%11))
		}
		if !tr.dirs[dir] {
			if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
				t.Fatal(err)
			}
			for d := dir; d != "."; d = filepath.Dir(d) {
				tr.dirs[d] = true
			}
		}
		data := make([]byte, size)
		off := r.Intn(len(noise))
		for i := 0; i < size; {
			i += copy(data[i:], noise[off:])
			off = 0
		}
		copy(data, fmt.Sprintf("file %d of seed %d\n", n, spec.seed)) // no two alike
		rel := filepath.Join(dir, "file"+strconv.Itoa(n))
		if err := os.WriteFile(filepath.Join(root, rel), data, 0o644); err != nil {
			t.Fatal(err)
		}
		tr.files[rel] = sha256.Sum256(data)
		files = append(files, rel)
		total += int64(size)
	}
	linked := map[string]bool{}
	for i := 0; i < 20 && i < len(files); i++ {
		a := files[(i*131)%len(files)]
		link := filepath.Join(filepath.Dir(files[(i*17+3)%len(files)]), "link"+strconv.Itoa(i))
		if err := os.Link(filepath.Join(root, a), filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
		tr.files[link] = tr.files[a]
		sym, target := filepath.Join(filepath.Dir(a), "sym"+strconv.Itoa(i)), "../"+filepath.Base(a)
		if err := os.Symlink(target, filepath.Join(root, sym)); err != nil {
			t.Fatal(err)
		}
		tr.symlinks[sym] = target
		linked[a] = true
	}
	for i := 0; i < 20 && i < len(files); i++ {
		orig := files[(i*197+11)%len(files)]
		if tr.shared[orig] || linked[orig] {
			continue
		}
		dup := filepath.Join(filepath.Dir(files[(i*29+7)%len(files)]), "dup"+strconv.Itoa(i))
		data, err := os.ReadFile(filepath.Join(root, orig))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, dup), data, 0o644); err != nil {
			t.Fatal(err)
		}
		when := time.Date(2023, 1, 1, 0, 0, i, 0, time.UTC)
		for _, p := range []string{orig, dup} {
			if err := os.Chtimes(filepath.Join(root, p), when, when); err != nil {
				t.Fatal(err)
			}
		}
		tr.files[dup] = tr.files[orig]
		tr.shared[orig], tr.shared[dup] = true, true
	}
	return tr
}

// fileKey identifies one state of a file: a name that still has it has not
// been replaced or written to since.
type fileKey struct {
	ino, size    uint64
	mtime, ctime int64
}

// checker checks destinations against a srcTree, reading each file only
// once for as long as it stays as it was when read.
type checker struct {
	src  *srcTree
	seen map[string]fileKey
}

func newChecker(src *srcTree) *checker { return &checker{src: src, seen: map[string]fileKey{}} }

// forget drops what was read, for a destination that is removed.
func (c *checker) forget() { c.seen = map[string]fileKey{} }

// absentOrRight checks a destination left by a stopped run: every name
// that is not a temporary (or in a temporary directory) is absent or
// complete and equal to its source (type, content, symlink target). It returns the number of regular files
// in place and of temporaries left.
func (c *checker) absentOrRight(t *testing.T, dst string) (files, temps int) {
	t.Helper()
	if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
		return 0, 0
	}
	err := filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasSuffix(d.Name(), ".fastcopy-tmp") {
			temps++
			if d.IsDir() {
				// A new directory not yet put in place: what is in it is
				// out of sight, and the next run removes it.
				return fs.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dst, p)
		switch d.Type() {
		case fs.ModeDir:
			if !c.src.dirs[rel] {
				t.Errorf("%s is a directory in the destination, not in the source", rel)
			}
		case 0:
			want, ok := c.src.files[rel]
			if !ok && rel == ".fastcopy-made" {
				return nil // the record of the temporaries the killed run made
			}
			if !ok {
				t.Errorf("%s is a file in the destination, not in the source", rel)
				return nil
			}
			files++
			var st syscall.Stat_t
			if err := syscall.Lstat(p, &st); err != nil {
				return err
			}
			k := fileKey{st.Ino, uint64(st.Size), st.Mtim.Nano(), st.Ctim.Nano()}
			if c.seen[rel] == k {
				return nil // read before, and not replaced or written since
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if sha256.Sum256(data) != want {
				t.Errorf("%s is under its final name but its content is not its source's (%d bytes)", rel, len(data))
				return nil
			}
			c.seen[rel] = k
		case fs.ModeSymlink:
			want, ok := c.src.symlinks[rel]
			got, _ := os.Readlink(p)
			if !ok || got != want {
				t.Errorf("%s is a symlink to %q in the destination; in the source: %q (%v)", rel, got, want, ok)
			}
		default:
			t.Errorf("%s is a %v in the destination", rel, d.Type())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, temps
}

// complete checks that dst holds every file of the source, right, and no
// temporary.
func (c *checker) complete(t *testing.T, dst string) {
	t.Helper()
	files, temps := c.absentOrRight(t, dst)
	if files != len(c.src.files) || temps != 0 {
		t.Errorf("%d of %d files in place, %d temporaries left; want all and none", files, len(c.src.files), temps)
	}
	for rel := range c.src.symlinks {
		if _, err := os.Lstat(filepath.Join(dst, rel)); err != nil {
			t.Errorf("symlink missing from the copy: %v", err)
		}
	}
}

// result is how a run of the binary ended.
type result struct {
	code           int // exit code, -1 when killed by a signal
	signal         syscall.Signal
	stdout, stderr string
	elapsed        time.Duration
}

// proc is a running fastcopy.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	start, end     time.Time // end is set before done is sent on
	done           chan error
}

// startBinary starts bin with args.
func startBinary(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	return startBinaryEnv(t, bin, nil, args...)
}

// startBinaryEnv is startBinary with env added to the environment.
func startBinaryEnv(t *testing.T, bin string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), done: make(chan error, 1)}
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.start = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		err := p.cmd.Wait()
		p.end = time.Now()
		close(exited)
		p.done <- err
	}()
	// A test that fails while the process runs must not leave it running:
	// it would keep the test's filesystem busy and its mount in place.
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = p.cmd.Process.Kill()
			<-exited
		}
	})
	return p
}

// wait waits for the process to end; with stopAfter > 0 it sends sig that
// long after the start, unless the process has ended by then.
func (p *proc) wait(t *testing.T, stopAfter time.Duration, sig syscall.Signal) result {
	t.Helper()
	var err error
	if stopAfter > 0 {
		select {
		case err = <-p.done:
		case <-time.After(time.Until(p.start.Add(stopAfter))):
			_ = p.cmd.Process.Signal(sig) // fails only when it has just ended
			err = <-p.done
		}
	} else {
		err = <-p.done
	}
	res := result{stdout: p.stdout.String(), stderr: p.stderr.String(), elapsed: p.end.Sub(p.start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.signal = ws.Signal()
		}
	default:
		t.Fatalf("%s: %v", p.cmd.Path, err)
	}
	return res
}

// runBinary runs bin with args; with stopAfter > 0 it sends sig that long
// after the start, unless the process has ended by then.
func runBinary(t *testing.T, bin string, stopAfter time.Duration, sig syscall.Signal, args ...string) result {
	t.Helper()
	return startBinary(t, bin, args...).wait(t, stopAfter, sig)
}

// cacheOpens checks that the hash cache at path opens and reads cleanly,
// as "fastcopy cache stats" sees it, and returns its number of entries.
func cacheOpens(t *testing.T, bin, path string) int {
	t.Helper()
	res := runBinary(t, bin, 0, 0, "cache", "stats", "--cache", path)
	if res.code != 0 || res.stderr != "" {
		t.Fatalf("fastcopy cache stats: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, line := range strings.Split(res.stdout, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "entries:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Fatalf("fastcopy cache stats printed no entry count:\n%s", res.stdout)
	return 0
}

// noTemps fails the test for every temporary left under root.
func noTemps(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(d.Name(), ".fastcopy-tmp") {
			t.Errorf("temporary left behind: %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// sameAsSource fails the test unless dst is a copy of the source in every
// property treecmp checks, but that duplicates may share an inode.
func sameAsSource(t *testing.T, src *srcTree, dst string) {
	t.Helper()
	all, err := treecmp.Compare(src.root, dst, treecmp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var diffs []string
	for _, d := range all {
		if rel, err := strconv.Unquote(d[:strings.Index(d, ": ")]); err == nil && src.shared[rel] && strings.HasPrefix(d[len(strconv.Quote(rel)):], ": hard links ") {
			continue // deduplicated: the copy shares the data of a duplicate
		}
		diffs = append(diffs, d)
	}
	if len(diffs) > 0 {
		if len(diffs) > 20 {
			diffs = append(diffs[:20], fmt.Sprintf("... and %d more", len(diffs)-20))
		}
		t.Fatalf("the copy differs from its source:\n%s", strings.Join(diffs, "\n"))
	}
}

// TestKillAndInterrupt copies a tree of ~300 MB in a few thousand files and
// stops the copier over and over: SIGKILL at random moments spread over a
// whole run (on a fresh destination, then again while the next run resumes
// what the killed one left), then SIGINT and SIGTERM. After every kill,
// each name in the destination is absent or complete and right, and the
// hash cache opens; an interrupted run exits 130 and leaves no temporary;
// a final run completes the copy exactly.
func TestKillAndInterrupt(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping in -short mode: copies ~300 MB some thirty times")
	}
	started := time.Now()
	bin := buildFastcopy(t)
	work := scratchFS(t, 2<<30)
	src, dst, cache := filepath.Join(work, "src"), filepath.Join(work, "dst"), filepath.Join(work, "hashes.db")
	tree := makeTree(t, src, treeSpec{bytes: 300 << 20, seed: 1})
	check := newChecker(tree)
	args := []string{"-q", "--cache", cache, src, dst}
	var d time.Duration // how long a whole run takes
	fresh := func(t *testing.T) {
		t.Helper()
		if err := os.RemoveAll(dst); err != nil {
			t.Fatal(err)
		}
		check.forget()
	}

	t.Logf("binary built and tree of %d files written in %v", len(tree.files), time.Since(started).Round(time.Millisecond))

	// How long a whole run takes here, now, after another was removed, as
	// in the rounds below: their kills are spread over it.
	for i := 0; i < 2; i++ {
		fresh(t)
		full := runBinary(t, bin, 0, 0, args...)
		if full.code != 0 {
			t.Fatalf("a full run exited %d:\n%s", full.code, full.stderr)
		}
		d = full.elapsed
	}
	noTemps(t, dst)
	t.Logf("a full run takes %v", d.Round(time.Millisecond))

	t.Run("SIGKILL", func(t *testing.T) {
		const wantKills = 20
		r := rand.New(rand.NewSource(20240601))
		strata := r.Perm(10) // the fresh runs' kills: one in each tenth of a run
		kills, completed, withTemps := 0, 0, 0
		for round := 0; kills < wantKills; round++ {
			if round == 30 {
				t.Fatalf("only %d kills landed in %d rounds", kills, round)
			}
			// Fail, and clean up (unmount), rather than be killed by -timeout.
			if dl, ok := t.Deadline(); ok && time.Until(dl) < time.Minute+4*d {
				t.Fatalf("out of time after %d kills (a run takes %v here)", kills, d)
			}
			fresh(t)
			for _, resumed := range []bool{false, true} {
				delay := time.Duration((float64(strata[round%10]) + r.Float64()) / 10 * float64(d))
				if resumed {
					// Less is left to do: kill within the first part of a run.
					delay = time.Duration(r.Float64() * 0.6 * float64(d))
				}
				res := runBinary(t, bin, delay, syscall.SIGKILL, args...)
				if res.signal != syscall.SIGKILL {
					if res.code != 0 {
						t.Fatalf("round %d: exit %d:\n%s", round, res.code, res.stderr)
					}
					completed++
					check.complete(t, dst)
					continue
				}
				kills++
				files, temps := check.absentOrRight(t, dst)
				if temps > 0 {
					withTemps++
				}
				t.Logf("kill %2d after %6v (%-7s run): %4d files in place, %3d temporaries left",
					kills, delay.Round(time.Millisecond), map[bool]string{false: "fresh", true: "resumed"}[resumed], files, temps)
				cacheOpens(t, bin, cache)
				if t.Failed() {
					t.FailNow()
				}
			}
		}
		t.Logf("%d kills (%d left temporaries), %d runs finished before their kill", kills, withTemps, completed)

		// What the last kill left, finished.
		if res := runBinary(t, bin, 0, 0, args...); res.code != 0 {
			t.Fatalf("the run after the last kill exited %d:\n%s", res.code, res.stderr)
		}
		check.complete(t, dst)
		cacheOpens(t, bin, cache)
	})

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			var res result
			delay := d / 2
			for ; ; delay /= 4 {
				fresh(t)
				if res = runBinary(t, bin, delay, sig, args...); res.code != 0 {
					break
				}
				if delay < 10*time.Millisecond {
					t.Fatalf("every run finished before the signal; nothing was interrupted")
				}
				t.Logf("the run finished in %v, before the signal: again, sooner", res.elapsed)
			}
			if res.code != 130 {
				t.Errorf("exit %d (signal %v), want 130:\n%s", res.code, res.signal, res.stderr)
			}
			if !strings.Contains(res.stderr, "interrupted") {
				t.Errorf("stderr does not say the run was interrupted:\n%s", res.stderr)
			}
			files, temps := check.absentOrRight(t, dst)
			if temps != 0 {
				t.Errorf("%d temporaries left", temps)
			}
			t.Logf("signalled after %v: exit %d after %v, %d files in place", delay.Round(time.Millisecond), res.code, res.elapsed.Round(time.Millisecond), files)
			cacheOpens(t, bin, cache)
		})
	}

	// What the last interrupted run left, finished: an exact copy in every
	// property, data and metadata.
	res := runBinary(t, bin, 0, 0, args...)
	if res.code != 0 {
		t.Fatalf("the final run exited %d:\n%s", res.code, res.stderr)
	}
	sameAsSource(t, tree, dst)
	noTemps(t, dst)
	if n := cacheOpens(t, bin, cache); n == 0 {
		t.Error("the hash cache is empty after complete runs")
	}
	t.Logf("%v in all", time.Since(started).Round(time.Millisecond))
}

// unmountScratch unmounts a test's scratch filesystem. Another test's child
// process (a mount, mkfs or fastcopy started in parallel) can hold a copy of
// a descriptor into it for the moment between its fork and its exec, so a
// busy mount is tried again for a while and then detached lazily: what the
// test checked is done, and the mount goes once the last holder closes.
func unmountScratch(t *testing.T, mnt string) {
	var out []byte
	var err error
	for try := 0; try < 40; try++ {
		if out, err = exec.Command("umount", mnt).CombinedOutput(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	if lout, lerr := exec.Command("umount", "-l", mnt).CombinedOutput(); lerr != nil {
		t.Errorf("umount %s: %v: %s; umount -l: %v: %s", mnt, err, out, lerr, lout)
	}
}
