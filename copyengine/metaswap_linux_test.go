//go:build linux

package copyengine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
)

// A writer of the destination may exchange any name in it with a symlink
// to a file elsewhere (renameat2 RENAME_EXCHANGE), as often as it likes,
// while a run goes on. These tests do that for the names whose metadata a
// run changes without writing them, and check that the file elsewhere
// keeps its mode, owner and times: a run as root must never change a file
// outside the destination through a swapped name.

// swapper exchanges each pair (a[i], b[i]) over and over with
// RENAME_EXCHANGE until stop is called, and reports how many exchanges
// succeeded (a pair whose names do not both exist is skipped).
func swapper(a, b []string) (stop func() int) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var n int
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			for i := range a {
				if unix.Renameat2(unix.AT_FDCWD, a[i], unix.AT_FDCWD, b[i], unix.RENAME_EXCHANGE) == nil {
					n++
				}
			}
		}
	}()
	return func() int {
		cancel()
		wg.Wait()
		return n
	}
}

// outsideFile makes a root-owned 0600 file outside the destination and
// returns it with a check that it is still as made.
func outsideFile(t *testing.T, dir string) (path string, check func(run int) bool) {
	t.Helper()
	path = filepath.Join(dir, "secret")
	writeFile(t, path, []byte("not to be touched"))
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	var before syscall.Stat_t
	if err := syscall.Lstat(path, &before); err != nil {
		t.Fatal(err)
	}
	return path, func(run int) bool {
		t.Helper()
		var st syscall.Stat_t
		if err := syscall.Lstat(path, &st); err != nil {
			t.Fatal(err)
		}
		if st.Mode != before.Mode || st.Uid != before.Uid || st.Gid != before.Gid || st.Mtim != before.Mtim || st.Ctim != before.Ctim {
			t.Errorf("run %d changed the file outside the destination: mode %o -> %o, owner %d:%d -> %d:%d, ctime %v -> %v",
				run, before.Mode&0o7777, st.Mode&0o7777, before.Uid, before.Gid, st.Uid, st.Gid, before.Ctim, st.Ctim)
			return false
		}
		return true
	}
}

const swapRuns = 40

// TestSwappedModeFix: unchanged files whose mode alone differs get it
// fixed in place, while their names are swapped with a symlink to a file
// outside the destination.
func TestSwappedModeFix(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root (the file outside the destination is root's, as a run as root could change it)")
	}
	scr := scratchDir(t)
	src, dst, out := filepath.Join(scr, "src"), filepath.Join(scr, "dst"), filepath.Join(scr, "outside")
	secret, untouched := outsideFile(t, out)
	const n = 8
	var names, links []string
	for i := 0; i < n; i++ {
		writeFile(t, filepath.Join(src, fmt.Sprintf("f%d", i)), pattern(int64(i), 100))
		if err := os.Chmod(filepath.Join(src, fmt.Sprintf("f%d", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Join(dst, fmt.Sprintf("f%d", i)))
		links = append(links, filepath.Join(dst, fmt.Sprintf("s%d", i)))
	}
	if _, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst}); err != nil {
		t.Fatal(err)
	}
	met, swappedRuns := 0, 0
	for run := 1; run <= swapRuns; run++ {
		// Each name a regular file of mode 0600 (only the mode differs
		// from the source), each partner a symlink to the secret.
		for i := range names {
			if st, err := os.Lstat(names[i]); err == nil && st.Mode()&os.ModeSymlink != 0 {
				if err := unix.Renameat2(unix.AT_FDCWD, names[i], unix.AT_FDCWD, links[i], unix.RENAME_EXCHANGE); err != nil {
					t.Fatal(err)
				}
			}
			_ = os.Remove(links[i])
			if err := os.Symlink(secret, links[i]); err != nil {
				t.Fatal(err)
			}
			if err := unix.Fchmodat(unix.AT_FDCWD, names[i], 0o600, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				t.Fatal(err)
			}
		}
		stop := swapper(names, links)
		sum, _ := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Jobs: 2})
		swaps := stop()
		met += len(sum.Failures)
		if swaps > 0 {
			swappedRuns++ // on a busy machine the swapper may get no turn in a run
		}
		if !untouched(run) {
			return
		}
	}
	if swappedRuns == 0 {
		t.Fatalf("the swapper never exchanged a name in %d runs", swapRuns)
	}
	t.Logf("%d runs, %d with swaps; %d entries failed because their name was swapped", swapRuns, swappedRuns, met)
}

// TestSwappedSpecialTemp: FIFOs and a device are made under their
// predictable temporary names, which are swapped with a symlink to a file
// outside the destination while the run sets their mode.
func TestSwappedSpecialTemp(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root (devices, and a file outside the destination that only root could change)")
	}
	scr := scratchDir(t)
	src, dst, out := filepath.Join(scr, "src"), filepath.Join(scr, "dst"), filepath.Join(scr, "outside")
	secret, untouched := outsideFile(t, out)
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	var names, temps, links []string
	for i := 0; i < 6; i++ {
		name := fmt.Sprintf("p%d", i)
		var err error
		if i == 0 {
			err = unix.Mknod(filepath.Join(src, name), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))
		} else {
			err = unix.Mkfifo(filepath.Join(src, name), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(src, name), 0o666); err != nil { // not what creation gives under umask 022
			t.Fatal(err)
		}
		names = append(names, filepath.Join(dst, name))
		temps = append(temps, filepath.Join(dst, "."+name+tempSuffix))
		links = append(links, filepath.Join(dst, fmt.Sprintf("s%d", i)))
	}
	met := 0
	for run := 1; run <= swapRuns*5; run++ {
		for i := range names {
			_ = os.Remove(names[i])
			_ = os.Remove(temps[i])
			_ = os.Remove(links[i])
			if err := os.Symlink(secret, links[i]); err != nil {
				t.Fatal(err)
			}
		}
		stop := swapper(temps, links)
		sum, _ := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Jobs: 2})
		swaps := stop()
		met += swaps
		if !untouched(run) {
			t.Logf("failures of the run: %v", sum.Failures)
			return
		}
	}
	if met == 0 {
		t.Fatalf("the swapper never exchanged a temporary in %d runs", swapRuns*5)
	}
	t.Logf("%d runs; the swapper exchanged a temporary %d times", swapRuns*5, met)
}
