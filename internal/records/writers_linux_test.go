//go:build linux

package records

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func openDir(t *testing.T, path string) *fileio.Dir {
	t.Helper()
	d, err := fileio.OpenDir(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestMHLWriteListsEachFileAsDestHoldsIt(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a"), "alpha")
	write(t, filepath.Join(root, "sub", "b"), "beta!")
	var s Set
	s.Add(Listed{Path: "a", Sum: verify.Bytes([]byte("stale"))})
	s.Add(Listed{Path: "a", Sum: verify.Bytes([]byte("alpha")), Extra: map[string]string{"md5": "2c1743a391305fbf367df8e4f069f9f9"}})
	s.Add(Listed{Path: "sub/b", Sum: verify.Bytes([]byte("beta!")), Extra: map[string]string{"md5": "5e6e75b0d24ebf2b4ddaddcd3a1888db"}})
	m := MHL{Root: openDir(t, root), RootPath: root, Formats: []string{"xxh128", "md5"}, Dirs: []string{"", "sub"}, ToolVersion: "test"}
	w, err := m.Write(&s)
	if err != nil {
		t.Fatal(err)
	}
	if w.Seq != 1 || w.Files != 2 || !strings.HasPrefix(w.Path, filepath.Join(root, MHLFolder)+string(filepath.Separator)) {
		t.Fatalf("written %+v, want generation 1 of 2 files in %s", w, MHLFolder)
	}
	gen, err := os.ReadFile(w.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gen), verify.Hex(verify.Bytes([]byte("alpha")))) || strings.Contains(string(gen), verify.Hex(verify.Bytes([]byte("stale")))) {
		t.Fatal("the generation does not list a's last digest alone")
	}

	// A file listed without a digest in a format of the generation, and
	// one no longer a regular file, are errors: nothing is written.
	s.Add(Listed{Path: "c", Sum: verify.Bytes(nil)})
	write(t, filepath.Join(root, "c"), "")
	if _, err := m.Write(&s); err == nil || !strings.Contains(err.Error(), "no md5 digest") {
		t.Fatalf("a file without its md5: %v", err)
	}
	m.Formats = []string{"xxh128"}
	os.Remove(filepath.Join(root, "c"))
	os.Mkdir(filepath.Join(root, "c"), 0o755)
	if _, err := m.Write(&s); err == nil || !strings.Contains(err.Error(), "no longer a regular file") {
		t.Fatalf("a listed file that became a directory: %v", err)
	}

	// The history goes only where the root's path still leads.
	moved := root + ".moved"
	if err := os.Rename(root, moved); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(root, 0o755)
	var one Set
	one.Add(Listed{Path: "a", Sum: verify.Bytes([]byte("alpha"))})
	if _, err := m.Write(&one); err == nil || !strings.Contains(err.Error(), "is no longer the directory the run copied into") {
		t.Fatalf("a root renamed away: %v", err)
	}
}

func TestBagWriteListsThePayloadAndFailsWhatItCannot(t *testing.T) {
	bag := t.TempDir()
	payload := filepath.Join(bag, "data")
	write(t, filepath.Join(payload, "listed"), "one")
	write(t, filepath.Join(payload, "sub", "stranger"), "two")
	write(t, filepath.Join(payload, ".made"), "not payload")
	if err := os.Symlink("listed", filepath.Join(payload, "link")); err != nil {
		t.Fatal(err)
	}
	var s Set
	s.Add(Listed{Path: "listed", Extra: map[string]string{"sha256": strings.Repeat("a", 64)}})
	s.Add(Listed{Path: "gone"}) // listed without a sha256
	b := Bag{Payload: openDir(t, payload), PayloadPath: payload, Root: bag, Format: "sha256", Agent: "fastcopy test", NoSync: true, Skip: ".made"}
	w, failed, err := b.Write(&s)
	if err != nil {
		t.Fatal(err)
	}
	why := map[string]string{}
	for _, f := range failed {
		why[f.Path] = f.Err.Error()
	}
	if len(failed) != 3 || !strings.Contains(why["gone"], "no sha256 digest") || !strings.Contains(why["sub/stranger"], "neither copied by this run nor listed in the bag's manifest") || !strings.Contains(why["link"], "not a regular file") {
		t.Fatalf("failures %q", why)
	}
	if w.Oxum != "3.1" || w.Manifest != "manifest-sha256.txt" {
		t.Fatalf("written %+v, want the one listed file", w)
	}
	man, err := os.ReadFile(filepath.Join(bag, w.Manifest))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Repeat("a", 64) + "  data/listed\n"; string(man) != want {
		t.Fatalf("manifest %q, want %q", man, want)
	}
}
