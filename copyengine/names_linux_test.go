package copyengine_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
	"github.com/fastcopy/fastcopy/internal/treeverify"
)

// windowsFS is a filesystem with Windows' name rules (or, for plain NTFS,
// without them), mounted through the FUSE driver a Linux machine without
// the kernel's exfat, vfat and ntfs3 modules has.
type windowsFS struct {
	name   string // the subtest
	cfg    loopfs.FUSEConfig
	label  string // how the messages name it
	utf16  bool   // only names that are UTF-8 (plain NTFS: no other rule)
	ascii  bool   // the driver takes only printable ASCII names (fusefat)
	encode bool   // --names=encode can round-trip the tree
	// others: the driver fails other things than names, which this test
	// is not about (fusefat: no chown, and a renamed directory loses its
	// contents): only the names' failures are checked.
	others bool
}

var windowsFilesystems = []windowsFS{
	{name: "exFAT", cfg: loopfs.ExFAT(64 << 20),
		label: "exFAT", encode: true},
	{name: "NTFS windows_names", cfg: loopfs.NTFS(64<<20, "windows_names"),
		label: "NTFS mounted with windows_names", encode: true},
	{name: "FAT32", cfg: loopfs.FUSEConfig{Type: loopfs.FuseFAT, Size: 64 << 20},
		label: "FAT", ascii: true, others: true},
	{name: "NTFS plain", cfg: loopfs.NTFS(64 << 20),
		label: "NTFS", utf16: true, encode: true},
}

// namesTree is a source tree with names Windows cannot hold (bad) and
// names it can (good), by path relative to the tree.
var namesTree = struct{ good, bad []string }{
	good: []string{"plain.txt", "sub/ok.bin", "sub/deep/x", " lead", "COM0", "sub/.hidden"},
	bad: []string{"we:ird?.txt", "sub/CON", "sub/nul.tar.gz", "sub/dot.", "sub/space ", "sub/ctl\x01x",
		`q"*<>\|`, "bad:dir/inner.txt", latin1Name},
}

// latin1Name is a name from an old disk: "é" in Latin-1, not UTF-8.
const latin1Name = "sub/lat\xe9in"

// lookAlikeName is good on a filesystem that takes Unicode and a name of its
// own in the encoding (it gets quoted).
const lookAlikeName = "sub/pre\uFF1Aquoted"

// TestWindowsNames copies a tree with names Windows cannot hold to FAT32,
// exFAT and NTFS (with and without windows_names) on loop images: by
// default each such file fails on its own, naming the rule and the
// filesystem, with nothing of it written and the other files copied; with
// --names=encode the tree goes there under look-alike names and comes back
// to ext4 with --names=decode byte-identical, and no-change reruns in both
// directions copy nothing.
func TestWindowsNames(t *testing.T) {
	t.Parallel()
	for _, wfs := range windowsFilesystems {
		t.Run(wfs.name, func(t *testing.T) {
			mnt := loopfs.MountFUSE(t, wfs.cfg)
			src := filepath.Join(scratchDir(t), "src")
			files := map[string][]byte{}
			all := append(append(slices.Clone(namesTree.good), namesTree.bad...), lookAlikeName)
			for i, rel := range all {
				files[rel] = pattern(int64(i+1), 1000+i)
				writeFile(t, filepath.Join(src, rel), files[rel])
			}
			refused := map[string]bool{} // the paths that fail, as the failures name them
			if wfs.utf16 {
				refused[latin1Name] = true
			} else {
				for _, rel := range namesTree.bad {
					if rel == "bad:dir/inner.txt" {
						rel = "bad:dir" // the directory fails, with all it holds
					}
					refused[rel] = true
				}
			}
			if wfs.ascii {
				refused[lookAlikeName] = true
			}

			// Strict: each file it cannot hold fails alone; the rest is copied.
			dst := mnt.Path("strict")
			sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst})
			if len(refused) == 0 {
				if err != nil {
					t.Fatalf("strict run: %v (failures %v)", err, sum.Failures)
				}
				sameTree(t, src, dst)
			} else {
				if !errors.Is(err, copyengine.ErrSomeFailed) {
					t.Fatalf("strict run: err %v, want ErrSomeFailed", err)
				}
				got := map[string]string{}
				for _, f := range sum.Failures {
					got[f.Path] = f.Err
				}
				for rel := range refused {
					msg, ok := got[rel]
					switch {
					case !ok:
						t.Errorf("%q did not fail", rel)
					case !strings.Contains(msg, "which "+wfs.label+" cannot store"):
						t.Errorf("%q failed with %q, which does not name the filesystem", rel, msg)
					case !wfs.ascii && !strings.HasSuffix(msg, "; use --names=encode"):
						t.Errorf("%q failed with %q, without the hint", rel, msg)
					}
				}
				for rel, msg := range got {
					if refused[rel] {
						continue
					}
					if wfs.others {
						t.Logf("(not about names) %q failed: %s", rel, msg)
					} else {
						t.Errorf("%q failed: %s", rel, msg)
					}
				}
				for _, rel := range []string{"we:ird?.txt", latin1Name} {
					if refused[rel] {
						t.Logf("%q: %s", rel, got[rel])
					}
				}
				// No trace of a refused file, not even a temporary.
				have := listTree(t, dst)
				for rel := range refused {
					stem := strings.TrimRight(filepath.Base(rel), ". ")
					for _, h := range have {
						if strings.Contains(h, stem) {
							t.Errorf("%q is in the destination, from %q that failed", h, rel)
						}
					}
				}
				// Exactly the other files.
				want := wantTree(all, refused, func(s string) string { return s })
				if !wfs.others && !slices.Equal(have, want) {
					t.Errorf("the destination holds\n%q\nwant\n%q", have, want)
				}
				for _, rel := range want {
					if b, ok := files[rel]; ok && !wfs.others {
						if !bytesEqualFile(t, filepath.Join(dst, rel), b) {
							t.Errorf("%s: content differs", rel)
						}
					}
				}
			}

			// A dry run tells the same from the filesystem's type, and
			// writes nothing.
			if wfs.name == "exFAT" {
				before := listTree(t, mnt.Path())
				sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: mnt.Path(), DryRun: true})
				if !errors.Is(err, copyengine.ErrSomeFailed) || int(sum.Failed) != len(refused) {
					t.Errorf("dry run: err %v, %d failures, want ErrSomeFailed and %d", err, sum.Failed, len(refused))
				}
				if after := listTree(t, mnt.Path()); !slices.Equal(before, after) {
					t.Errorf("the dry run changed the volume: %q before, %q after", before, after)
				}
			}

			// Encode: the whole tree goes there; a rerun copies nothing.
			enc := mnt.Path("encoded")
			opt := copyengine.Options{Sources: []string{src}, Dest: enc, Names: copyengine.NamesEncode}
			sum, err = runEngine(t, opt)
			if !wfs.encode {
				// fusefat takes no look-alike: the files fail still, and
				// the message says that encoding cannot help.
				if !errors.Is(err, copyengine.ErrSomeFailed) {
					t.Fatalf("encode run on %s: err %v, want ErrSomeFailed", wfs.name, err)
				}
				for _, f := range sum.Failures {
					if !refused[f.Path] {
						continue // not about names
					}
					if !strings.Contains(f.Err, "--names=encode cannot help") {
						t.Errorf("%q failed with %q, want a message that encoding cannot help", f.Path, f.Err)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("encode run: %v (failures %v)", err, sum.Failures)
			}
			want := wantTree(all, nil, encodePath)
			if have := listTree(t, enc); !slices.Equal(have, want) {
				t.Errorf("the encoded copy holds\n%q\nwant\n%q", have, want)
			}
			if sum, err := runEngine(t, opt); err != nil || sum.Copied != 0 || sum.Skipped != int64(len(all)) {
				t.Errorf("encode rerun: err %v, copied %d, skipped %d; want nil, 0, %d", err, sum.Copied, sum.Skipped, len(all))
			}
			// fastcopy verify --names=encode src enc
			rep, err := treeverify.CompareTrees(context.Background(), src, enc, treeverify.TreeOptions{DestName: copyengine.NamesEncode.DestName()})
			if err != nil || !rep.OK() || rep.Files != int64(len(all)) {
				t.Errorf("verify --names=encode: err %v, %d files, differences %v", err, rep.Files, rep.Diffs)
			}

			// Decode: back to ext4, byte-identical; a rerun copies nothing.
			back := filepath.Join(scratchDir(t), "back")
			opt = copyengine.Options{Sources: []string{enc}, Dest: back, Names: copyengine.NamesDecode}
			if sum, err := runEngine(t, opt); err != nil || sum.Copied != int64(len(all)) {
				t.Fatalf("decode run: err %v, copied %d, want nil, %d (failures %v)", err, sum.Copied, len(all), sum.Failures)
			}
			sameTree(t, src, back)
			if sum, err := runEngine(t, opt); err != nil || sum.Copied != 0 || sum.Skipped != int64(len(all)) {
				t.Errorf("decode rerun: err %v, copied %d, skipped %d; want nil, 0, %d", err, sum.Copied, sum.Skipped, len(all))
			}
		})
	}
}

// encodePath is EncodeName of each element of rel.
func encodePath(rel string) string {
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		parts[i] = copyengine.EncodeName(p)
	}
	return strings.Join(parts, "/")
}

// wantTree is the sorted list of paths (files and the directories above
// them) a copy of files holds, without those refused (or below them), each
// mapped by name.
func wantTree(files []string, refused map[string]bool, name func(string) string) []string {
	set := map[string]bool{}
	for _, rel := range files {
		skip := false
		for r := range refused {
			if rel == r || strings.HasPrefix(rel, r+"/") {
				skip = true
			}
		}
		if skip {
			continue
		}
		for p := rel; p != "."; p = filepath.Dir(p) {
			set[name(p)] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// bytesEqualFile reports whether the file p holds b.
func bytesEqualFile(t *testing.T, p string, b []byte) bool {
	t.Helper()
	got, err := os.ReadFile(p)
	if err != nil {
		t.Error(err)
		return false
	}
	return bytes.Equal(got, b)
}

// listTree returns the sorted relative paths under root, as the filesystem
// lists them.
func listTree(t *testing.T, root string) []string {
	t.Helper()
	hiddenGone(t, root)
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}
