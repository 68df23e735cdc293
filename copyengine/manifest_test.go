package copyengine_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/treeverify"
	"github.com/fastcopy/fastcopy/verify"
)

// rotSource writes the source the tests of digests taken from the source
// start from, in a scratch directory: a few files (one empty, two names of
// one inode), old times, contents from seed. It returns the source, the
// destination to copy to, and the files by relative path.
func rotSource(t *testing.T, seed int64) (src, dst string, files map[string][]byte) {
	t.Helper()
	base := scratchDir(t)
	src, dst = filepath.Join(base, "src"), filepath.Join(base, "dst")
	files = map[string][]byte{
		"a.txt":     []byte("alpha\n"),
		"b.bin":     pattern(seed+1, 150<<10),
		"sub/c.bin": pattern(seed+2, 9000),
		"h1":        pattern(seed+3, 7000),
		"empty":     nil,
	}
	writeFiles(t, src, files)
	noErr(t, os.Link(filepath.Join(src, "h1"), filepath.Join(src, "h2")))
	files["h2"] = files["h1"]
	for rel := range files {
		setTimes(t, filepath.Join(src, rel), oldTime)
	}
	settleSources()
	return src, dst, files
}

// rotInPlace rots the copies of rels in dst: a byte flipped in place,
// size and mtime as they were.
func rotInPlace(t *testing.T, dst string, files map[string][]byte, rels ...string) {
	t.Helper()
	for _, rel := range rels {
		p := filepath.Join(dst, rel)
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		noErr(t, err)
		_, err = f.WriteAt([]byte{^files[rel][100]}, 100)
		noErr(t, err)
		noErr(t, f.Close())
		setTimes(t, p, oldTime)
	}
}

// TestManifestFromSource: DEST files corrupted with their size and mtime
// kept (one of them a hard link, as the copy of a source hard link is),
// then a run with --no-cache --manifest. The manifest states what the
// source holds, so each line's digest is the source's; a destination file
// with another digest is not the same file and is copied again, and a
// check of DEST against the manifest then passes because DEST is right, not
// because the manifest took its digests from DEST.
func TestManifestFromSource(t *testing.T) {
	t.Parallel()
	src, dst, files := rotSource(t, 70)
	opt := copyengine.Options{Sources: []string{src + "/"}, Dest: dst}
	if _, err := runEngine(t, opt); err != nil {
		t.Fatal(err)
	}
	rotInPlace(t, dst, files, "b.bin", "h1")

	m := filepath.Join(t.TempDir(), "m.xxh128")
	opt.Manifest = m
	sum, err := runEngine(t, opt)
	if err != nil {
		t.Fatalf("run with --manifest: %v (failures %v)", err, sum.Failures)
	}
	mf, err := os.Open(m)
	noErr(t, err)
	entries, err := verify.ReadManifest(mf)
	mf.Close()
	noErr(t, err)
	listed := map[string]verify.Sum{}
	for _, e := range entries {
		listed[e.Path] = e.Sum
	}
	for rel, data := range files {
		got, ok := listed[rel]
		switch {
		case !ok:
			t.Errorf("%s is not in the manifest", rel)
		case got != verify.Bytes(data):
			t.Errorf("manifest lists %s as %s; its source is %s", rel, verify.Hex(got), verify.Hex(verify.Bytes(data)))
		}
		if b, err := os.ReadFile(filepath.Join(dst, rel)); err != nil || !bytes.Equal(b, data) {
			t.Errorf("DEST's %s does not hold its source's bytes after the run (%v)", rel, err)
		}
	}
	if len(entries) != len(files) {
		t.Errorf("manifest has %d lines, want %d", len(entries), len(files))
	}
	if sum.Copied < 2 {
		t.Errorf("copied %d files; want at least the two rotted ones", sum.Copied)
	}
	rep, err := treeverify.CheckManifest(context.Background(), entries, dst, treeverify.TreeOptions{})
	noErr(t, err)
	if !rep.OK() {
		t.Errorf("DEST against the manifest: %+v", rep.Diffs)
	}
}
