package dedup

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// placedTarget writes content under dir/rel and returns it as a target in
// place with its stat now, and a proof that opens directories under dir.
func placedTarget(t *testing.T, dir, rel, content string, external bool) (*Target, Proof) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := fileio.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	d, name := splitRel(rel)
	sd, err := root.OpenBeneath(d)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sd.Lstat(name)
	sd.Close()
	if err != nil {
		t.Fatal(err)
	}
	tg := &Target{Rel: rel, Sum: verify.Bytes([]byte(content)), Size: st.Size, External: external}
	tg.Done(true, PlacedOf(&st))
	bufs := &sync.Pool{New: func() any { b := make([]byte, 8); return &b }}
	return tg, Proof{OpenDir: root.OpenBeneath, Bufs: bufs}
}

func noOwn() (fileio.Stat, error) { return fileio.Stat{}, os.ErrNotExist }

func TestProofFindsOnlyTheFileAsPlaced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tg, pf := placedTarget(t, dir, "d/a", "0123456789abcdef", false)
	if pf.Gone(tg) {
		t.Fatal("a target in place is gone")
	}
	if err := os.WriteFile(filepath.Join(dir, "d", "a"), []byte("another content!"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !pf.Gone(tg) {
		t.Fatal("a target rewritten since it was placed is still found")
	}
	never := &Target{Rel: "d/b"}
	if _, ok := pf.Find(never); ok {
		t.Fatal("a target never placed is found")
	}
}

func TestProofRereadsExternalTargets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tg, pf := placedTarget(t, dir, "x", "0123456789abcdef", true)
	var read int64
	pf.Count = func(n int64) { read += n }
	f, ok := pf.Prove(tg, Dup{Sum: tg.Sum, Own: noOwn})
	if !ok || f.File == nil {
		t.Fatalf("an external target holding the digest: proven %v", ok)
	}
	f.Close()
	if read != tg.Size {
		t.Errorf("read %d bytes, want the target's %d read again", read, tg.Size)
	}
	if _, ok := pf.Prove(tg, Dup{Sum: verify.Bytes([]byte("something else!!")), Own: noOwn}); ok {
		t.Fatal("an external target whose bytes do not have the digest is proven")
	}
}

func TestProofRefusesOwnNameAndOtherBytes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tg, pf := placedTarget(t, dir, "x", "0123456789abcdef", false)
	own2 := func() (fileio.Stat, error) {
		d, err := fileio.OpenDir(dir)
		if err != nil {
			return fileio.Stat{}, err
		}
		defer d.Close()
		return d.Lstat("x")
	}
	if _, ok := pf.Prove(tg, Dup{Sum: tg.Sum, Own: own2}); ok {
		t.Fatal("a target that is the duplicate's own name is proven")
	}
	if err := os.WriteFile(filepath.Join(dir, "src"), []byte("0123456789abcdeX"), 0o644); err != nil {
		t.Fatal(err)
	}
	pf.Bytes = true
	open := func() (*fileio.File, error) {
		d, err := fileio.OpenDir(dir)
		if err != nil {
			return nil, err
		}
		defer d.Close()
		return d.Open("src", false)
	}
	if _, ok := pf.Prove(tg, Dup{Sum: tg.Sum, Own: noOwn, Open: open}); ok {
		t.Fatal("under --dedup-verify=bytes, a target with other bytes is proven")
	}
	f, ok := pf.Prove(tg, Dup{Sum: tg.Sum, Own: noOwn, Open: func() (*fileio.File, error) {
		d, err := fileio.OpenDir(dir)
		if err != nil {
			return nil, err
		}
		defer d.Close()
		return d.Open("x", false)
	}})
	if !ok {
		t.Fatal("under --dedup-verify=bytes, a target with the same bytes is not proven")
	}
	f.Close()
}
