package dedup

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// notes is a Recorder that remembers the names it was told of.
type notes struct{ before, after []string }

func (n *notes) Before(dirRel, name string, dir bool) { n.before = append(n.before, name) }
func (n *notes) Gone(string)                          {}
func (n *notes) After(dd *fileio.Dir, dirRel, name string, st *fileio.Stat, err error) {
	n.after = append(n.after, name)
}

func TestPlaceLinkChecksTheInodeProven(t *testing.T) {
	dir := t.TempDir()
	tg, pf := placedTarget(t, dir, "t", "same bytes", false)
	found, ok := pf.Find(tg)
	if !ok {
		t.Fatal("target not found")
	}
	defer found.Close()
	rec := &notes{}
	p := Place{Found: found, Dir: found.Dir, Tmp: ".dup.tmp", Made: rec}
	ok, note, err := p.Link()
	if !ok || note != "" || err != nil {
		t.Fatalf("Link: %v %q %v", ok, note, err)
	}
	a, _ := os.Stat(filepath.Join(dir, "t"))
	b, _ := os.Stat(filepath.Join(dir, ".dup.tmp"))
	if !os.SameFile(a, b) {
		t.Error("the temporary is not the target's inode")
	}
	if len(rec.before) != 1 || len(rec.after) != 1 {
		t.Errorf("recorded %v, %v", rec.before, rec.after)
	}
	// The target replaced since its proof: never linked.
	if err := os.Remove(filepath.Join(dir, "t")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "t"), []byte("other bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.Tmp = ".dup2.tmp"
	if ok, _, err := p.Link(); ok || err != nil {
		t.Fatalf("a replaced target linked: %v %v", ok, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".dup2.tmp")); !os.IsNotExist(err) {
		t.Errorf("the link to the replaced target was left: %v", err)
	}
	// Clone refuses a target that is no longer the file as placed.
	if _, ok, err := p.Clone(func(*fileio.File) error { return nil }); ok || err != nil {
		t.Fatalf("a replaced target cloned: %v %v", ok, err)
	}
}

func TestConfirmDestWithoutDest(t *testing.T) {
	c := Proof{}.ConfirmDest(nil, func(*fileio.Dir, string) (verify.Sum, error) { return verify.Sum{}, nil })
	if _, ok := c(&Target{}, verify.Sum{}); ok {
		t.Error("confirmed without DEST")
	}
}
