//go:build linux

package main

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterruptDirMetadata interrupts a run with SIGINT as soon as it has
// made its first directories, and checks that every directory it leaves
// under its final name has its source's mode and mtime (not the 0700 it is
// made with and the time of its last write), and that a rerun completes
// the copy.
func TestInterruptDirMetadata(t *testing.T) {
	t.Parallel()
	bin := buildFastcopy(t)
	work := scratchFS(t, 512<<20)
	src, dst := filepath.Join(work, "src"), filepath.Join(work, "dst")
	tree := makeTree(t, src, treeSpec{bytes: 64 << 20, seed: 5})
	// Directories of a mode a fresh one does not have, and an old mtime,
	// set deepest first (setting a child's moves nothing of its parent's).
	when := time.Date(2021, 3, 4, 5, 6, 7, 890123456, time.UTC)
	var dirs []string
	for d := range tree.dirs {
		dirs = append(dirs, d)
	}
	for i := range dirs { // deepest first: more separators first
		for j := i + 1; j < len(dirs); j++ {
			if strings.Count(dirs[j], "/") > strings.Count(dirs[i], "/") {
				dirs[i], dirs[j] = dirs[j], dirs[i]
			}
		}
	}
	for _, d := range dirs {
		p := filepath.Join(src, d)
		if err := os.Chmod(p, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
	}

	cmd := exec.Command(bin, "-v", "--no-cache", src, dst)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	var log strings.Builder
	sc := bufio.NewScanner(stderr)
	mkdirs := 0
	for sc.Scan() {
		line := sc.Text()
		log.WriteString(line + "\n")
		if strings.HasPrefix(line, "mkdir ") {
			if mkdirs++; mkdirs == 3 {
				if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("the run exited with %v after %d directories made, want exit %d:\n%s", err, mkdirs, exitInterrupted, log.String())
	}

	checked, files := 0, 0
	err = filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dst, p)
		if !d.IsDir() {
			files++
			return nil
		}
		if strings.HasSuffix(d.Name(), ".fastcopy-tmp") {
			t.Errorf("a directory is left under its temporary name: %s", rel)
			return filepath.SkipDir
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return err
		}
		checked++
		if mode := st.Mode & 0o7777; mode != 0o750 {
			t.Errorf("%s: mode %04o, want the source's 0750", rel, mode)
		}
		if mt := time.Unix(st.Mtim.Unix()); !mt.Equal(when) {
			t.Errorf("%s: mtime %v, want the source's %v", rel, mt.UTC(), when)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("interrupted after 3 directories made (%d in all): %d directories and %d files left in place", mkdirs, checked, files)
	if files >= len(tree.files) {
		t.Errorf("all %d files were copied: the interrupt came too late to test anything", files)
	}

	if res := runBinary(t, bin, 0, 0, "-q", "--no-cache", src, dst); res.code != 0 {
		t.Fatalf("the rerun exited %d:\n%s", res.code, res.stderr)
	}
	sameAsSource(t, tree, dst)
}
