package made

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestLineRoundTrip: what entryLine writes, parseLine reads back as the
// same entry; a torn line is not taken for one.
func TestLineRoundTrip(t *testing.T) {
	for _, en := range []entry{{dir: true}, {dir: false}, {dir: false, ino: 42, kind: 'f'}, {dir: true, ino: 7, kind: 'd'}} {
		rel := "a b/\"c\".fastcopy-tmp"
		lines := strings.Split(strings.TrimSuffix(entryLine(rel, en), "\n"), "\n")
		gotRel, got, add, ok := parseLine(lines[0])
		if !ok || !add || gotRel != rel || got.dir != en.dir {
			t.Fatalf("parseLine(%q) = %q, %+v, %v, %v", lines[0], gotRel, got, add, ok)
		}
		if en.ino != 0 {
			if len(lines) != 2 {
				t.Fatalf("entryLine of %+v: %q, want an identity line", en, lines)
			}
			gotRel, got, add, ok = parseLine(lines[1])
			if !ok || !add || gotRel != rel || got.ino != en.ino || got.kind != en.kind {
				t.Fatalf("parseLine(%q) = %q, %+v, %v, %v", lines[1], gotRel, got, add, ok)
			}
		}
	}
	if _, _, _, ok := parseLine(`+ f 0 "torn`); ok {
		t.Fatal("a torn line was parsed")
	}
	if rel, _, add, ok := parseLine(`- "x"`); !ok || add || rel != "x" {
		t.Fatalf("a drop line: %q %v %v", rel, add, ok)
	}
}

// TestRecordTakesOnlyWhatItMade: a temporary the run announced and made
// is its own, in this run and the next; an entry of the same name the
// record does not name, or of another type, is not; the record is removed
// once it names nothing that is still there.
func TestRecordTakesOnlyWhatItMade(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("skipping: Windows has no fileio.OpenTemp, so no record is kept there and no leftover is ever taken for a run's own")
	}
	root := t.TempDir()
	open := func() (*fileio.Dir, *Record) {
		d, err := fileio.OpenDir(root)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d, Load(Config{Root: d, Path: root, UID: fileio.Geteuid()})
	}
	d, m := open()
	const tmp = ".a.fastcopy-tmp"
	m.Before("", tmp, false)
	if err := os.WriteFile(filepath.Join(root, tmp), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	m.After(d, "", tmp, nil, nil)
	if !m.OursByName(d, "", tmp) {
		t.Fatal("the temporary the run made is not its own")
	}
	if err := os.WriteFile(filepath.Join(root, ".b.fastcopy-tmp"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if m.OursByName(d, "", ".b.fastcopy-tmp") {
		t.Fatal("a temporary the record does not name was taken for the run's")
	}
	m.Finish()

	d, m = open()
	if !m.OursByName(d, "", tmp) {
		t.Fatal("the next run does not take the kept temporary for a leftover")
	}
	st, err := d.Lstat(tmp)
	if err != nil {
		t.Fatal(err)
	}
	st.Mode = st.Mode&^fileio.ModeType | fileio.ModeDir
	if m.Ours("", tmp, &st) {
		t.Fatal("a directory was taken for the recorded file")
	}
	if err := os.Remove(filepath.Join(root, tmp)); err != nil {
		t.Fatal(err)
	}
	m.Finish()
	if _, err := os.Lstat(filepath.Join(root, Name)); !os.IsNotExist(err) {
		t.Fatalf("the record naming nothing is still there: %v", err)
	}
}
