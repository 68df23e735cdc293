package mirror

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// proof is a Proof over a DEST directory: names in ours are fastcopy's,
// names in excluded are excluded, hist is the ASC MHL history.
type proof struct {
	root     string
	ours     map[string]bool
	excluded map[string]bool
	hist     string
}

func (p *proof) OpenDest(rel string) (*fileio.Dir, error) {
	return fileio.OpenDir(filepath.Join(p.root, filepath.FromSlash(rel)))
}
func (p *proof) Ours(_ *fileio.Dir, dstRel, name string) bool { return p.ours[joinRel(dstRel, name)] }
func (p *proof) Excluded(_, srcRel string, _ fileio.DirEntry) bool {
	return p.excluded[srcRel]
}
func (p *proof) History(rel string) bool                              { return rel == p.hist }
func (p *proof) Cache(_ *fileio.Dir, name string, _ fileio.Stat) bool { return name == "cache.db" }

// report records what the pass reports.
type report struct {
	removed, planned, kept, failed []string
}

func (r *report) Removed(rel string)         { r.removed = append(r.removed, rel) }
func (r *report) Kept(rel, why string)       { r.kept = append(r.kept, rel+": "+why) }
func (r *report) Failed(rel string, _ error) { r.failed = append(r.failed, rel) }
func (r *report) Planned(rel string)         { r.planned = append(r.planned, rel) }

func writeTree(t *testing.T, root string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// note is the Dir the walk would note for DEST's directory rel, whose
// source has names.
func note(t *testing.T, root, rel string, names ...string) Dir {
	t.Helper()
	d, err := fileio.OpenDir(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	st, err := d.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return Dir{DstRel: rel, SrcRel: rel, Dev: st.Dev, Ino: st.Ino, Names: names}
}

func newPass(root string, pr *proof, r *report, maxDelete int) *Pass {
	return New(Config{Dest: root, MaxDelete: maxDelete, Proof: pr, Report: r, SkipWrite: func() bool { return false }})
}

func exists(root, rel string) bool {
	_, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
	return err == nil
}

// TestFinishKeepsWhatPolicyKeeps removes what the source lacks and keeps
// each entry keep keeps: one the source has, fastcopy's own, an excluded
// one (and the directory holding one), the ASC MHL history, the hash
// cache; a directory in which something failed keeps its extras.
func TestFinishKeepsWhatPolicyKeeps(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, "has", "gone", ".tmp-ours", "skip", "ascmhl/x", "cache.db",
		"old/a", "old/b/c", "part/keep.me", "part/drop", "failed/has", "failed/extra1", "failed/extra2")
	pr := &proof{root: root, ours: map[string]bool{".tmp-ours": true}, excluded: map[string]bool{"skip": true, "part/keep.me": true}, hist: "ascmhl"}
	r := &report{}
	p := newPass(root, pr, r, 0)
	p.Note(note(t, root, "", "has", "failed"))
	p.Note(note(t, root, "failed", "has"))
	if err := p.Finish(context.Background(), []string{"failed/has"}); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"has", ".tmp-ours", "skip", "ascmhl/x", "cache.db", "part/keep.me", "part", "failed/extra1", "failed/extra2"} {
		if !exists(root, rel) {
			t.Errorf("%s was removed; it is kept", rel)
		}
	}
	for _, rel := range []string{"gone", "old", "part/drop"} {
		if exists(root, rel) {
			t.Errorf("%s was kept; the source lacks it", rel)
		}
	}
	sort.Strings(r.removed)
	if want := []string{"gone", "old", "old/a", "old/b", "old/b/c", "part/drop"}; !reflect.DeepEqual(r.removed, want) {
		t.Errorf("removed %q, want %q", r.removed, want)
	}
	if want := []string{`failed: 2 entries, as something in it failed`}; !reflect.DeepEqual(r.kept, want) {
		t.Errorf("kept %q, want %q", r.kept, want)
	}
}

// TestFinishMaxDelete removes nothing when the plan exceeds --max-delete,
// and reports each entry planned.
func TestFinishMaxDelete(t *testing.T) {
	for _, max := range []int{-1, 2} {
		root := t.TempDir()
		writeTree(t, root, "keep", "x", "y/z")
		r := &report{}
		p := newPass(root, &proof{root: root}, r, max)
		p.Note(note(t, root, "", "keep"))
		err := p.Finish(context.Background(), nil)
		var me *MaxDeleteError
		if !errors.Is(err, ErrMaxDelete) || !errors.As(err, &me) || me.Planned != 3 || me.Max != max {
			t.Fatalf("max %d: Finish returned %v, want a MaxDeleteError of 3 planned", max, err)
		}
		if !exists(root, "x") || !exists(root, "y/z") || len(r.removed) != 0 {
			t.Errorf("max %d: removed %q over the bound", max, r.removed)
		}
		sort.Strings(r.planned)
		if want := []string{"x", "y", "y/z"}; !reflect.DeepEqual(r.planned, want) {
			t.Errorf("max %d: planned %q, want %q", max, r.planned, want)
		}
		if !strings.Contains(err.Error(), "nothing was deleted") {
			t.Errorf("max %d: message %q", max, err)
		}
	}
}

// TestFinishDirectoryReplaced keeps the extras of a directory that is no
// longer the one the walk listed.
func TestFinishDirectoryReplaced(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, "d/extra")
	d := note(t, root, "d")
	if err := os.Rename(filepath.Join(root, "d"), filepath.Join(root, "d.old")); err != nil {
		t.Fatal(err)
	}
	writeTree(t, root, "d/extra")
	r := &report{}
	p := newPass(root, &proof{root: root}, r, 0)
	p.Note(d)
	if err := p.Finish(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if !exists(root, "d/extra") || len(r.removed) != 0 {
		t.Errorf("removed %q from a directory the walk did not list", r.removed)
	}
	if want := []string{"d: the directory was replaced during the run"}; !reflect.DeepEqual(r.kept, want) {
		t.Errorf("kept %q, want %q", r.kept, want)
	}
}

// TestKeepRespelled keeps the extras of a directory DEST spells otherwise
// than the source, naming the source's spelling.
func TestKeepRespelled(t *testing.T) {
	p := &Pass{}
	d := &noted{srcRel: "Photos", respelled: true}
	v := p.keep(question{dir: d, extras: 1})
	if !v.kept || v.why != `1 entry, as the source names it "Photos", another spelling: they may be the only copies of another source directory's entries` {
		t.Errorf("keep of a respelled directory: %+v", v)
	}
	if v := p.keep(question{dir: &noted{}}); v.kept || v.why != "" {
		t.Errorf("keep of a directory with nothing against it: %+v", v)
	}
}
