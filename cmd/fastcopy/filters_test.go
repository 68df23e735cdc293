//go:build linux

package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// treePaths lists the paths below dir, relative to it and sorted, a
// directory's with a final "/".
func treePaths(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	slices.Sort(out)
	return out, err
}

// cmdPaths is "paths DIR WANT": DIR holds exactly the paths the file WANT
// lists, one a line (a directory's with a final "/"), in any order.
func cmdPaths(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: paths DIR WANT")
	}
	got, err := treePaths(ts.MkAbs(args[0]))
	ts.Check(err)
	var want []string
	for _, l := range strings.Split(ts.ReadFile(args[1]), "\n") {
		if l != "" {
			want = append(want, l)
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		ts.Fatalf("%s holds\n\t%s\nwant\n\t%s", args[0], strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// TestFiltersRsyncOracle copies one tree with fastcopy and with rsync -a
// under rule sets that mean the same to both (rsync anchors a pattern
// with an inner slash only with a leading "/"), and compares the paths
// copied.
func TestFiltersRsyncOracle(t *testing.T) {
	rsync, err := exec.LookPath("rsync")
	if err != nil {
		t.Skip("rsync is not installed: no oracle to compare with")
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	src := filepath.Join(t.TempDir(), "src")
	for _, f := range []string{
		"keep.txt", "x.tmp", "keep.log", "other.log", "a.jpg", "cache/c", "sub/cache/c", "sub/cache.txt",
		"sub/deep/d.txt", "sub/deep/e.tmp", "dir/keep.log", "dir/other.log", "dir/sub/b.jpg", "docs/x/y.txt",
		"docs/z.tmp", "sub/deep/cache",
	} {
		p := filepath.Join(src, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(src, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(t.TempDir(), "list")
	if err := os.WriteFile(list, []byte("dir/keep.log\ndocs\nsub/deep/d.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		fc, rsync []string
	}{
		{"base name", []string{"--exclude", "*.tmp"}, []string{"--exclude", "*.tmp"}},
		{"name at any depth", []string{"--exclude", "cache"}, []string{"--exclude", "cache"}},
		{"anchored ./ directory", []string{"--exclude", "./cache/"}, []string{"--exclude", "/cache/"}},
		{"directories only", []string{"--exclude", "cache/"}, []string{"--exclude", "cache/"}},
		{"inner slash", []string{"--exclude", "sub/deep"}, []string{"--exclude", "/sub/deep"}},
		{"include first", []string{"--include", "keep.log", "--exclude", "*.log"}, []string{"--include", "keep.log", "--exclude", "*.log"}},
		{"exclude first", []string{"--exclude", "*.log", "--include", "keep.log"}, []string{"--exclude", "*.log", "--include", "keep.log"}},
		{"only jpg", []string{"--include", "*/", "--include", "*.jpg", "--exclude", "*"}, []string{"--include", "*/", "--include", "*.jpg", "--exclude", "*"}},
		{"one file of a directory", []string{"--include", "dir/keep.log", "--exclude", "dir/*"}, []string{"--include", "/dir/keep.log", "--exclude", "/dir/*"}},
		{"include below an excluded directory", []string{"--exclude", "dir/", "--include", "dir/keep.log"}, []string{"--exclude", "dir/", "--include", "/dir/keep.log"}},
		{"files-from", []string{"--files-from", list}, []string{"-r", "--files-from", list}},
		{"files-from and rules", []string{"--files-from", list, "--exclude", "*.tmp"}, []string{"-r", "--files-from", list, "--exclude", "*.tmp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fdst, rdst := filepath.Join(dir, "fastcopy"), filepath.Join(dir, "rsync")
			var stdout, stderr bytes.Buffer
			args := append(append([]string{"--no-cache", "-q"}, tc.fc...), src, fdst)
			if code := run(context.Background(), args, &stdout, &stderr); code != exitOK {
				t.Fatalf("fastcopy %q: exit %d: %s", args, code, stderr.String())
			}
			rargs := append(append([]string{"-a"}, tc.rsync...), src+"/", rdst+"/")
			if out, err := exec.Command(rsync, rargs...).CombinedOutput(); err != nil {
				t.Fatalf("rsync %q: %v: %s", rargs, err, out)
			}
			got, err := treePaths(fdst)
			if err != nil {
				t.Fatal(err)
			}
			want, err := treePaths(rdst)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("fastcopy %q copied\n\t%s\nrsync %q\n\t%s", tc.fc, strings.Join(got, "\n\t"), tc.rsync, strings.Join(want, "\n\t"))
			}
		})
	}
}
