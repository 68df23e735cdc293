package copyengine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
)

// TestNamesModeRefused checks that Run, not only the flag, refuses a mode
// it does not know, before writing anything.
func TestNamesModeRefused(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	dst := filepath.Join(t.TempDir(), "dst")
	_, err := copyengine.Run(context.Background(), copyengine.Options{Sources: []string{src}, Dest: dst, Names: "windows"})
	var re *copyengine.RefusalError
	if !errors.As(err, &re) {
		t.Fatalf("Run with Names %q: %v, want a RefusalError", "windows", err)
	}
	if _, err := os.Stat(dst); err == nil {
		t.Errorf("the refused run created %s", dst)
	}
}

// TestDecodeCollision checks that a decode that would put two source names
// on one destination name fails the second on its own, the name already
// right winning, and that an excluded name takes no part.
func TestDecodeCollision(t *testing.T) {
	t.Parallel()
	src := filepath.Join(scratchDir(t), "src")
	writeFile(t, filepath.Join(src, "a:b"), []byte("ascii"))
	writeFile(t, filepath.Join(src, "a\uFF1Ab"), []byte("fullwidth"))
	writeFile(t, filepath.Join(src, "c:d"), []byte("excluded"))
	writeFile(t, filepath.Join(src, "c\uFF1Ad"), []byte("kept"))
	dst := filepath.Join(scratchDir(t), "dst")
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Names: copyengine.NamesDecode, Excludes: []string{"c:d"}})
	if !errors.Is(err, copyengine.ErrSomeFailed) || len(sum.Failures) != 1 || sum.Failures[0].Path != "a\uFF1Ab" {
		t.Fatalf("err %v, failures %v; want one, of %q", err, sum.Failures, "a\uFF1Ab")
	}
	for name, want := range map[string]string{"a:b": "ascii", "c:d": "kept"} {
		if b, err := os.ReadFile(filepath.Join(dst, name)); err != nil || string(b) != want {
			t.Errorf("%s holds %q (%v), want %q", name, b, err, want)
		}
	}
}
