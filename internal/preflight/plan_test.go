package preflight

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/fastcopy/fastcopy/internal/refusal"
)

// The argument rules: a directory SOURCE becomes DEST, a file lands as
// DEST/basename in a directory DEST and on DEST's name otherwise, several
// SOURCEs land each under its base name; a DEST inside its SOURCE,
// through a symlink too, is refused.
func TestMake(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"src/sub", "dst"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"src/f", "g"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	j := func(p string) string { return filepath.Join(dir, p) }

	p, err := Make(Config{Sources: []string{j("src")}, Dest: j("new")})
	if err != nil || p.DstRoot != j("new") || !p.Create || len(p.Roots) != 1 || !p.Roots[0].IsDir || p.Roots[0].DstRel != "" {
		t.Errorf("a directory onto a new name: %+v, %v", p, err)
	}
	p, err = Make(Config{Sources: []string{j("g")}, Dest: j("dst")})
	if err != nil || p.DstRoot != j("dst") || p.Create || p.OntoFile || p.Roots[0].DstRel != "g" || p.Roots[0].Name != "g" || p.Roots[0].SrcDir != dir {
		t.Errorf("a file into a directory: %+v, %v", p, err)
	}
	p, err = Make(Config{Sources: []string{j("g")}, Dest: j("dst/h")})
	if err != nil || p.DstRoot != j("dst") || !p.OntoFile || p.Roots[0].DstRel != "h" {
		t.Errorf("a file onto a new name: %+v, %v", p, err)
	}
	p, err = Make(Config{Sources: []string{j("src"), j("g")}, Dest: j("dst")})
	if err != nil || len(p.Roots) != 2 || p.Roots[0].DstRel != "src" || p.Roots[1].DstRel != "g" {
		t.Errorf("several sources: %+v, %v", p, err)
	}

	refused := func(what string, cfg Config) {
		t.Helper()
		_, err := Make(cfg)
		var r *refusal.Error
		if !errors.As(err, &r) || r.Msg == "" || r.Hint == "" {
			t.Errorf("%s: %v, want a refusal with a message and a hint", what, err)
		}
	}
	refused("no source", Config{Dest: j("dst")})
	refused("no destination", Config{Sources: []string{j("src")}})
	refused("a missing source", Config{Sources: []string{j("nowhere")}, Dest: j("dst")})
	refused("a destination inside the source", Config{Sources: []string{j("src")}, Dest: j("src/sub/copy")})
	refused("a source onto itself", Config{Sources: []string{j("src")}, Dest: j("src")})
	refused("several sources into a missing directory", Config{Sources: []string{j("src"), j("g")}, Dest: j("nowhere")})
	refused("two sources of one name", Config{Sources: []string{j("g"), j("src/../g")}, Dest: j("dst")})
	if runtime.GOOS != "windows" {
		if err := os.Symlink(j("src/sub"), j("link")); err != nil {
			t.Fatal(err)
		}
		refused("a destination inside the source through a symlink", Config{Sources: []string{j("src")}, Dest: j("link/copy")})
		if !In(j("link/copy"), j("src")) || !Same(j("link"), j("src/sub")) || In(j("dst"), j("src")) {
			t.Errorf("In and Same do not see through the symlink")
		}
	}
}
