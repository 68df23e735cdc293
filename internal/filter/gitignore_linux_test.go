//go:build linux

package filter

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestGitignoreReadOnce: a Tree reads a directory's .gitignore and filter
// file once, however many paths are asked about and however often: a
// file changed after the first question changes no later verdict.
func TestGitignoreReadOnce(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	for name, s := range map[string]string{".gitignore": "*.log\n", "sub/.gitignore": "*.tmp\n", "sub/.fcignore": "- *.dat\n"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Build(Config{GitIgnore: true, FilterFile: ".fcignore"})
	if err != nil {
		t.Fatal(err)
	}
	tr := r.Tree(dir)
	if !tr.Excluded("sub/a.log", false) || !tr.Excluded("sub/a.tmp", false) || !tr.Excluded("sub/a.dat", false) || tr.Excluded("sub/a.txt", false) {
		t.Fatal("the rules do not apply as written")
	}
	for name, s := range map[string]string{".gitignore": "*.txt\n", "sub/.gitignore": "", "sub/.fcignore": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if !tr.Excluded("sub/b.log", false) || !tr.Excluded("sub/b.tmp", false) || !tr.Excluded("sub/b.dat", false) || tr.Excluded("sub/b.txt", false) {
			t.Fatal("a file was read again: the verdicts follow its new content")
		}
	}
	if r.Tree(dir) != tr {
		t.Error("a second Tree for the same root")
	}
}

// TestGitignoreNotARegularFile: a .gitignore that is a FIFO is never
// opened (it would block the walk), nor one that is a directory; a
// symlink is not followed, as git does not follow it.
func TestGitignoreNotARegularFile(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	for _, d := range []string{"fifo", "dir/.gitignore", "link"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "rules"), []byte("*\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo", ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../rules", filepath.Join(dir, "link", ".gitignore")); err != nil {
		t.Fatal(err)
	}
	r, err := Build(Config{GitIgnore: true})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan bool)
	go func() {
		tr := r.Tree(dir)
		done <- tr.Excluded("fifo/x", false) || tr.Excluded("dir/x", false) || tr.Excluded("link/x", false) ||
			tr.Err("fifo") != nil || tr.Err("dir") != nil || tr.Err("link") != nil
	}()
	select {
	case bad := <-done:
		if bad {
			t.Error("a .gitignore that is not a regular file was read, or failed its directory")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the FIFO named .gitignore was opened: the walk blocks")
	}
}
