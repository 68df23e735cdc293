//go:build linux

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// removeWorkers is how many unlinks removeTree keeps in flight.
const removeWorkers = 32

// removeTree removes dir and everything below it, like os.RemoveAll, with
// many unlinks in flight. On a filesystem mounted with online discard and
// no journal (this machine's root), every unlink that frees blocks waits
// for the device to discard them: rm -rf of the 50,000-file source tree
// takes about 10 s, nearly all of it waiting, and it ran before every
// timed run. Parallel unlinks overlap those waits.
func removeTree(dir string) error {
	var files []string
	dirs := map[int][]string{} // by depth, to remove the deepest first
	maxDepth := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			depth := strings.Count(p, string(filepath.Separator))
			dirs[depth] = append(dirs[depth], p)
			maxDepth = max(maxDepth, depth)
			return nil
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		return err
	}
	if err := removeAll(files, os.Remove); err != nil {
		return err
	}
	for depth := maxDepth; depth >= 0; depth-- {
		if err := removeAll(dirs[depth], os.Remove); err != nil {
			return err
		}
	}
	return nil
}

// removeAll applies remove to every path with removeWorkers in parallel and
// returns the first error other than "does not exist".
func removeAll(paths []string, remove func(string) error) error {
	ch := make(chan string)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for w := 0; w < removeWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range ch {
				if err := remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, p := range paths {
		ch <- p
	}
	close(ch)
	wg.Wait()
	return first
}

// remove deletes dirs with removeTree. On a filesystem mounted with online
// discard it pauses discard for the deletion (mount -o remount,nodiscard,
// then remount,discard): with discard every unlink that frees blocks waits
// for the device to discard them, and the ext4 here has no journal to
// batch those discards, so deleting the 50,000-file tree took about 10 s
// with discard and about 1 s without. The timed runs always see the
// filesystem as it was mounted; trim discards the freed blocks at the end.
func (b *bench) remove(dirs ...string) error {
	if b.discardMnt != "" {
		if err := remount(b.discardMnt, "nodiscard"); err != nil {
			b.note("could not pause discard on %s (%v): wipes wait for the device's discards", b.discardMnt, err)
			b.discardMnt = ""
		} else {
			b.trimmed = true
			defer func() {
				if err := remount(b.discardMnt, "discard"); err != nil {
					// Never leave the machine's filesystem changed unnoticed.
					b.note("could not turn discard on again on %s: %v; run 'mount -o remount,discard %s'", b.discardMnt, err, b.discardMnt)
					b.discardMnt = ""
				}
			}()
		}
	}
	for _, d := range dirs {
		if err := removeTree(d); err != nil {
			return err
		}
	}
	return nil
}

// trim discards the blocks the wipes freed while discard was paused, as
// the filesystem's discard option would have.
func (b *bench) trim() {
	if !b.trimmed || b.discardMnt == "" {
		return // nothing freed without discard, or discard could not be restored (noted)
	}
	b.trimmed = false
	start := time.Now()
	if out, err := exec.Command("fstrim", b.discardMnt).CombinedOutput(); err != nil {
		b.note("fstrim %s: %v: %s", b.discardMnt, err, strings.TrimSpace(string(out)))
		return
	}
	b.logf("fstrim %s: %.1f s", b.discardMnt, time.Since(start).Seconds())
}

func remount(mnt, opt string) error {
	out, err := exec.Command("mount", "-o", "remount,"+opt, mnt).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// discardMount returns the mount point of the filesystem holding dir when
// that filesystem is mounted with online discard, else "".
func discardMount(dir string) string { return discardPoint(mountOfDir(dir)) }

// discardMountIn is discardMount reading the mountinfo table from r.
func discardMountIn(r io.Reader, dir string) string { return discardPoint(mountOf(r, dir)) }

func discardPoint(m mountEntry, ok bool) string {
	if !ok || !slices.Contains(strings.Split(m.superOpts, ","), "discard") {
		return ""
	}
	return m.point
}

// mountOfDir is mountOf on this process's /proc/self/mountinfo.
func mountOfDir(dir string) (mountEntry, bool) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return mountEntry{}, false
	}
	defer f.Close()
	return mountOf(f, dir)
}

// mountEntry is one line of /proc/self/mountinfo.
type mountEntry struct {
	devNum    string // MAJ:MIN
	point     string // mount point
	opts      string // per-mount options
	fsType    string
	source    string
	superOpts string // the filesystem's own options (discard, ...)
}

// mountOf returns the mountinfo entry (read from r) of the filesystem
// holding dir: the mount point that is the longest prefix of dir.
func mountOf(r io.Reader, dir string) (mountEntry, bool) {
	var best mountEntry
	found := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		a, b := strings.Fields(pre), strings.Fields(post)
		if !ok || len(a) < 6 || len(b) < 2 {
			continue
		}
		mnt := a[4]
		if (dir == mnt || strings.HasPrefix(dir, strings.TrimSuffix(mnt, "/")+"/")) && len(mnt) >= len(best.point) {
			best = mountEntry{devNum: a[2], point: mnt, opts: a[5], fsType: b[0], source: b[1]}
			if len(b) > 2 {
				best.superOpts = b[2]
			}
			found = true
		}
	}
	return best, found
}
