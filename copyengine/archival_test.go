package copyengine_test

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"hash"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/zeebo/blake3"

	"github.com/fastcopy/fastcopy/copyengine"
)

// archivalTree writes a source of distinct contents (no two files alike,
// so that nothing is deduplicated), one empty file and names that
// coreutils escapes (a backslash, a newline), with old times. It returns
// the source, a scratch base for destinations, the files and their bytes.
func archivalTree(t *testing.T) (src, base string, files map[string][]byte) {
	t.Helper()
	base = scratchDir(t)
	src = filepath.Join(base, "src")
	files = map[string][]byte{
		"a.txt":     []byte("alpha\n"),
		"big.bin":   pattern(11, 3<<20+123), // several reads of the 1 MiB buffer
		"sub/c.bin": pattern(12, 9000),
		"empty":     nil,
	}
	// Names Windows cannot hold: a backslash is its separator, and no
	// name may hold a line feed.
	if runtime.GOOS != "windows" {
		files["sub/back\\name"] = []byte("backslash\n")
		files["sub/new\nline"] = []byte("newline\n")
	}
	writeFiles(t, src, files)
	for rel := range files {
		setTimes(t, filepath.Join(src, rel), oldTime)
	}
	settleSources()
	return src, base, files
}

func archivalPayload(files map[string][]byte) (n int64) {
	for _, b := range files {
		n += int64(len(b))
	}
	return n
}

// archivalNewHash is the reference implementation of each format the test
// checks lines against.
var archivalNewHash = map[string]func() hash.Hash{
	"sha256": sha256.New,
	"sha512": sha512.New,
	"sha1":   sha1.New,
	"md5":    md5.New,
	"blake3": func() hash.Hash { return blake3.New() },
	"xxh64":  func() hash.Hash { return xxhash.New() },
}

// archivalTool is the coreutils tool that checks a manifest of each
// format ("" where none does).
var archivalTool = map[string]string{"sha256": "sha256sum", "sha512": "sha512sum", "sha1": "sha1sum", "md5": "md5sum", "blake3": "b3sum"}

// archivalEscape is a path as coreutils writes it in a line.
func archivalEscape(p string) (string, bool) {
	if !strings.ContainsAny(p, "\\\n\r") {
		return p, false
	}
	return strings.NewReplacer("\\", "\\\\", "\n", "\\n", "\r", "\\r").Replace(p), true
}

// TestArchivalManifestHash: --manifest-hash writes the manifest in the
// format named, in the line format of its coreutils tool, which checks it
// (sha256sum -c, md5sum -c...), with each digest the format's of the
// source's bytes. The extra digests are computed in the same read: the
// run reads exactly what the plain copy reads, each source byte once and
// each copy once for its read-back.
func TestArchivalManifestHash(t *testing.T) {
	src, base, files := archivalTree(t)
	payload := archivalPayload(files)
	plain, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: filepath.Join(base, "plain"), Dedup: "off"})
	noErr(t, err)
	if plain.BytesRead != 2*payload {
		t.Fatalf("the plain copy read %d B, want %d (the sources once, the copies once)", plain.BytesRead, 2*payload)
	}
	for _, format := range []string{"sha256", "sha512", "sha1", "md5", "blake3", "xxh64"} {
		t.Run(format, func(t *testing.T) {
			dst := filepath.Join(base, "dst-"+format)
			man := filepath.Join(base, "manifest."+format)
			sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Manifest: man, ManifestHash: format, Dedup: "off"})
			noErr(t, err)
			if sum.BytesRead != plain.BytesRead {
				t.Errorf("read %d B with a %s manifest, the plain copy %d B: the extra digest cost a read", sum.BytesRead, format, plain.BytesRead)
			}
			got, err := os.ReadFile(man)
			noErr(t, err)
			var rels []string
			for rel := range files {
				rels = append(rels, rel)
			}
			sort.Strings(rels)
			var want bytes.Buffer
			for _, rel := range rels {
				h := archivalNewHash[format]()
				h.Write(files[rel])
				name, esc := archivalEscape(rel)
				if esc {
					want.WriteByte('\\')
				}
				want.WriteString(hex.EncodeToString(h.Sum(nil)) + "  " + name + "\n")
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("manifest:\n%s\nwant:\n%s", got, want.Bytes())
			}
			tool := archivalTool[format]
			if tool == "" {
				return
			}
			if _, err := exec.LookPath(tool); err != nil {
				t.Logf("skipping the check with %s: %v", tool, err)
				return
			}
			cmd := exec.Command(tool, "-c", man)
			cmd.Dir = dst
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s -c: %v\n%s", tool, err, out)
			}
			t.Logf("%s -c:\n%s", tool, out)
			// And a changed byte fails there.
			noErr(t, os.WriteFile(filepath.Join(dst, "sub/c.bin"), append([]byte{^files["sub/c.bin"][0]}, files["sub/c.bin"][1:]...), 0o644))
			cmd = exec.Command(tool, "-c", man)
			cmd.Dir = dst
			if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "sub/c.bin: FAILED") {
				t.Errorf("%s -c after a byte changed: %v\n%s", tool, err, out)
			}
		})
	}
}

// TestArchivalManifestHashRefused: an unknown format, and one that has no
// manifest line format, are refused before anything is copied.
func TestArchivalManifestHashRefused(t *testing.T) {
	src, base, _ := archivalTree(t)
	for _, c := range []struct{ opt copyengine.Options }{
		{copyengine.Options{Manifest: filepath.Join(base, "m"), ManifestHash: "crc32"}},
		{copyengine.Options{Manifest: filepath.Join(base, "m"), ManifestHash: "c4"}},
		{copyengine.Options{ManifestHash: "sha256"}},
		{copyengine.Options{MHLHashes: []string{"md5"}}},
		{copyengine.Options{MHL: true, MHLHashes: []string{"sha256"}}},
	} {
		opt := c.opt
		opt.Sources, opt.Dest = []string{src}, filepath.Join(base, "dst")
		if _, err := runEngine(t, opt); err == nil {
			t.Errorf("%+v: not refused", c.opt)
		} else if _, ok := err.(*copyengine.RefusalError); !ok {
			t.Errorf("%+v: %v, want a refusal", c.opt, err)
		}
		if _, err := os.Lstat(filepath.Join(base, "dst")); err == nil {
			t.Errorf("%+v: DEST made by a refused run", c.opt)
		}
	}
}

// TestArchivalCacheKeepsDigests: the hash cache remembers a source's
// digests in the records' other formats with its xxh128, so a rerun that
// writes a sha256 manifest reads nothing of what is unchanged (0 B read,
// 0 B hashed) and still lists every file with its right sha256. A cache
// entry without the sha256 (from a run that wrote none) does not vouch:
// that rerun reads the sources once, and the next reads nothing.
func TestArchivalCacheKeepsDigests(t *testing.T) {
	src, base, files := archivalTree(t)
	payload := archivalPayload(files)
	db := filepath.Join(base, "hashes.db")
	dst := filepath.Join(base, "dst")
	man := filepath.Join(base, "m.sha256")
	run := func(what string, opt copyengine.Options) copyengine.Summary {
		t.Helper()
		opt.Sources, opt.Dest, opt.Dedup = []string{src}, dst, "off"
		sum, err := runCached(t, db, opt)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		t.Logf("%s: copied %d, skipped %d, read %d B, hashed %d B", what, sum.Copied, sum.Skipped, sum.BytesRead, sum.BytesHashed)
		return sum
	}
	run("first run, no manifest", copyengine.Options{})
	withSHA := copyengine.Options{Manifest: man, ManifestHash: "sha256"}
	sum := run("rerun with a sha256 manifest, the cache without sha256", withSHA)
	if sum.Copied != 0 || sum.BytesHashed != payload {
		t.Errorf("copied %d, hashed %d B; want 0 and %d (every source read once for its sha256)", sum.Copied, sum.BytesHashed, payload)
	}
	want, err := os.ReadFile(man)
	noErr(t, err)
	archivalCheckSHA256(t, want, files)
	noErr(t, os.Remove(man))
	sum = run("rerun with a sha256 manifest, the cache with it", withSHA)
	if sum.Copied != 0 || sum.BytesRead != 0 || sum.BytesHashed != 0 {
		t.Errorf("copied %d, read %d B, hashed %d B; want nothing read", sum.Copied, sum.BytesRead, sum.BytesHashed)
	}
	got, err := os.ReadFile(man)
	noErr(t, err)
	if !bytes.Equal(got, want) {
		t.Errorf("manifest from the cache:\n%s\nwant:\n%s", got, want)
	}
}

// archivalCheckSHA256 checks that a manifest lists every file with the
// sha256 of its bytes.
func archivalCheckSHA256(t *testing.T, manifest []byte, files map[string][]byte) {
	t.Helper()
	n := 0
	for rel, b := range files {
		d := sha256.Sum256(b)
		name, esc := archivalEscape(rel)
		line := hex.EncodeToString(d[:]) + "  " + name + "\n"
		if esc {
			line = "\\" + line
		}
		if !bytes.Contains(manifest, []byte(line)) {
			t.Errorf("manifest lacks %q", line)
		}
		n++
	}
	if lines := bytes.Count(manifest, []byte("\n")); lines != n {
		t.Errorf("manifest has %d lines, want %d", lines, n)
	}
}
