package copyengine_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/dedup"
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/loopfs"
	"github.com/fastcopy/fastcopy/verify"
)

// dupTree is a source tree of which 40% of the files repeat the content of
// another file.
type dupTree struct {
	files    map[string][]byte
	dupOf    map[string]string // duplicate -> the original whose content it holds
	distinct int64             // bytes of distinct content
	dupBytes int64             // bytes of the duplicates
}

// makeDupTree writes 30 files of distinct content (some of equal size, so
// that equal sizes alone prove nothing) and 20 duplicates of them, spread
// over three directories, every file with the same old mtime and mode.
func makeDupTree(t *testing.T, root string) dupTree {
	t.Helper()
	tr := dupTree{files: map[string][]byte{}, dupOf: map[string]string{}}
	for i := 0; i < 30; i++ {
		// Files i and i+24 have one size and different contents.
		size := 40<<10 + (i%24)*(21<<10) + 123
		rel := fmt.Sprintf("orig/o%02d", i)
		tr.files[rel] = pattern(int64(1000+i), size)
		tr.distinct += int64(size)
	}
	for j := 0; j < 20; j++ {
		orig := fmt.Sprintf("orig/o%02d", j%14) // six contents have two duplicates
		rel := fmt.Sprintf("d%d/dup%02d", j%3, j)
		if j%3 == 2 {
			rel = fmt.Sprintf("d2/deeper/dup%02d", j)
		}
		tr.files[rel] = tr.files[orig]
		tr.dupOf[rel] = orig
		tr.dupBytes += int64(len(tr.files[orig]))
	}
	for rel, data := range tr.files {
		p := filepath.Join(root, rel)
		writeFile(t, p, data)
		setTimes(t, p, oldTime)
	}
	settleSources()
	return tr
}

// usedBytes is the space the filesystem holding dir has in use (statfs).
func usedBytes(t testing.TB, dir string) int64 {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Blocks-st.Bfree) * int64(st.Bsize)
}

// lstatT returns the lstat of path.
func lstatT(t testing.TB, path string) unix.Stat_t {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// inodes returns the inode number of every file of rels under root.
func inodes(t testing.TB, root string, rels []string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, rel := range rels {
		out[rel] = lstatT(t, filepath.Join(root, rel)).Ino
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ext4Dir returns an empty directory on an ext4 filesystem, which cannot
// clone: the scratch filesystem when it is ext4, a loop-mounted one
// otherwise.
func ext4Dir(t *testing.T) string {
	t.Helper()
	if scratch != nil && scratch.Type == "ext4" {
		return scratchDir(t)
	}
	return loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 128 << 20}).Dir
}

// TestDedupCloneSharesExtents copies a tree in which 40% of the files
// duplicate others from another filesystem onto xfs and btrfs. Each
// duplicate is a clone of the copy of its original: FIEMAP marks their
// extents shared, the summary counts them, each file has its own inode, and
// the destination's used space grows by the distinct bytes only. Every file
// reads back equal to its source. Writing into one clone leaves the files
// it shared with alone; a rerun does nothing; --dedup=off writes it all.
func TestDedupCloneSharesExtents(t *testing.T) {
	t.Parallel()
	src := filepath.Join(scratchDir(t), "src") // not the filesystem under test: nothing is cloned from the source
	tr := makeDupTree(t, src)
	total := tr.distinct + tr.dupBytes
	for _, c := range reflinkFilesystems {
		t.Run(c.Type, func(t *testing.T) {
			fs := loopfs.Mount(t, c)
			for _, mode := range []dedup.Mode{dedup.Auto, dedup.Clone} {
				t.Run(string(mode), func(t *testing.T) {
					dst := fs.Path("dst-" + string(mode))
					before := usedBytes(t, fs.Dir)
					sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Dedup: mode})
					if err != nil {
						t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
					}
					grew := usedBytes(t, fs.Dir) - before
					t.Logf("%s: used space grew by %d bytes; distinct content %d, duplicates %d", c.Type, grew, tr.distinct, tr.dupBytes)
					if sum.Copied != 30 || sum.Deduped != 20 || sum.DedupCloned != 20 || sum.DedupLinked != 0 {
						t.Errorf("copied %d, deduplicated %d (cloned %d, hard-linked %d); want 30 written and 20 cloned",
							sum.Copied, sum.Deduped, sum.DedupCloned, sum.DedupLinked)
					}
					if sum.Bytes != tr.distinct || sum.BytesNotWritten != tr.dupBytes || sum.DiskSaved != tr.dupBytes {
						t.Errorf("bytes %d, not written %d, disk saved %d; want %d, %d, %d",
							sum.Bytes, sum.BytesNotWritten, sum.DiskSaved, tr.distinct, tr.dupBytes, tr.dupBytes)
					}
					if sum.Verified != 50 || sum.VerifiedBytes != total {
						t.Errorf("verified %d files, %d bytes; want all 50, %d bytes", sum.Verified, sum.VerifiedBytes, total)
					}
					if sum.DedupNote != "" {
						t.Errorf("dedup note %q on a filesystem that clones", sum.DedupNote)
					}
					// The space taken is the distinct content's, plus metadata.
					if grew < tr.distinct*9/10 || grew > tr.distinct+tr.dupBytes/4 {
						t.Errorf("used space grew by %d bytes; want about the %d distinct bytes (the duplicates hold %d)", grew, tr.distinct, tr.dupBytes)
					}
					hasDup := map[string]bool{}
					for d, o := range tr.dupOf {
						hasDup[o] = true
						for _, rel := range []string{d, o} {
							if shared, mapped := extentBytes(t, filepath.Join(dst, rel)); mapped < int64(len(tr.files[rel])) || shared != mapped {
								t.Errorf("%s: %d of %d mapped bytes shared; a file with a duplicate shares them all", rel, shared, mapped)
							}
						}
					}
					for rel := range tr.files {
						if _, isDup := tr.dupOf[rel]; !isDup && !hasDup[rel] {
							if shared, mapped := extentBytes(t, filepath.Join(dst, rel)); shared != 0 {
								t.Errorf("%s has no duplicate, yet %d of its %d bytes are shared", rel, shared, mapped)
							}
						}
						if st := lstatT(t, filepath.Join(dst, rel)); st.Nlink != 1 {
							t.Errorf("%s has %d links; a clone is a file of its own", rel, st.Nlink)
						}
					}
					sameTree(t, src, dst)

					t.Run("rerun", func(t *testing.T) {
						ino := inodes(t, dst, sortedKeys(tr.files))
						before := usedBytes(t, fs.Dir)
						sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Dedup: mode})
						if err != nil {
							t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
						}
						if sum.Copied != 0 || sum.Deduped != 0 || sum.Skipped != 50 || sum.BytesRead != 0 {
							t.Errorf("rerun: copied %d, deduplicated %d, skipped %d, read %d bytes; want all 50 skipped, nothing read",
								sum.Copied, sum.Deduped, sum.Skipped, sum.BytesRead)
						}
						for rel, n := range inodes(t, dst, sortedKeys(tr.files)) {
							if n != ino[rel] {
								t.Errorf("rerun replaced %s", rel)
							}
						}
						if grew := usedBytes(t, fs.Dir) - before; grew > 1<<20 {
							t.Errorf("rerun took %d bytes more", grew)
						}
					})
				})
			}

			t.Run("edit one clone", func(t *testing.T) {
				dst := fs.Path("dst-auto")
				// o00 has two duplicates: dup00 and dup14.
				edited := filepath.Join(dst, "d0/dup00")
				f, err := os.OpenFile(edited, os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.WriteAt([]byte("edited in one clone"), 20000); err != nil {
					t.Fatal(err)
				}
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
				for _, rel := range []string{"orig/o00", "d2/deeper/dup14"} {
					got, err := os.ReadFile(filepath.Join(dst, rel))
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, tr.files[rel]) {
						t.Errorf("writing to d0/dup00 changed %s, which shared its blocks", rel)
					}
				}
				got, _ := os.ReadFile(edited)
				if !bytes.Contains(got, []byte("edited in one clone")) {
					t.Error("the edit did not reach the clone")
				}
			})

			t.Run("off", func(t *testing.T) {
				dst := fs.Path("dst-off")
				before := usedBytes(t, fs.Dir)
				sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Dedup: dedup.Off})
				if err != nil {
					t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
				}
				grew := usedBytes(t, fs.Dir) - before
				if sum.Copied != 50 || sum.Deduped != 0 || sum.BytesNotWritten != 0 || sum.Bytes != total {
					t.Errorf("copied %d (%d bytes), deduplicated %d, not written %d; want all 50 written", sum.Copied, sum.Bytes, sum.Deduped, sum.BytesNotWritten)
				}
				if grew < total*9/10 {
					t.Errorf("used space grew by %d bytes; --dedup=off writes all %d", grew, total)
				}
				for rel := range tr.files {
					if shared, mapped := extentBytes(t, filepath.Join(dst, rel)); shared != 0 {
						t.Errorf("%s: %d of %d bytes shared under --dedup=off", rel, shared, mapped)
					}
				}
				sameTree(t, src, dst)
			})
		})
	}
}

// TestDedupHardlinkNeedsSameMetadata copies onto ext4, which cannot clone:
// --dedup=auto hard-links identical files, but only those whose kept
// metadata (mode, owner, group, mtime, extended attributes) is identical
// too, since one inode carries one set. Each file keeps its own metadata.
// A rerun relinks nothing.
func TestDedupHardlinkNeedsSameMetadata(t *testing.T) {
	t.Parallel()
	base := ext4Dir(t)
	src, dst := filepath.Join(base, "src"), filepath.Join(base, "dst")
	data := pattern(77, 70000)
	same := []string{"same1", "sub/same2", "sub/deeper/same3", "same4"}
	other := map[string]func(p string){
		"mode":  func(p string) { noErr(t, os.Chmod(p, 0o600)) },
		"mtime": func(p string) { setTimes(t, p, oldTime.Add(time.Second)) },
		"xattr": func(p string) { noErr(t, unix.Lsetxattr(p, "user.note", []byte("mine"), 0)) },
		"owner": func(p string) { noErr(t, os.Lchown(p, 4321, 4321)) },
	}
	for _, rel := range same {
		writeFile(t, filepath.Join(src, rel), data)
		setTimes(t, filepath.Join(src, rel), oldTime)
	}
	for name, differ := range other {
		p := filepath.Join(src, "other", name)
		writeFile(t, p, data)
		setTimes(t, p, oldTime)
		differ(p)
	}
	settleSources()

	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst})
	if err != nil {
		t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
	}
	inoOf := func(rel string) uint64 { return lstatT(t, filepath.Join(dst, rel)).Ino }
	want := inoOf(same[0])
	for _, rel := range same[1:] {
		if inoOf(rel) != want {
			t.Errorf("%s and %s have the same content and metadata but are different inodes", same[0], rel)
		}
	}
	if st := lstatT(t, filepath.Join(dst, same[0])); int(st.Nlink) != len(same) {
		t.Errorf("%s has %d links, want %d", same[0], st.Nlink, len(same))
	}
	for name := range other {
		rel := "other/" + name
		if st := lstatT(t, filepath.Join(dst, rel)); st.Nlink != 1 {
			t.Errorf("%s (other %s) shares its inode: %d links", rel, name, st.Nlink)
		}
	}
	// Each kept its own metadata.
	if st := lstatT(t, filepath.Join(dst, "other/mode")); st.Mode&0o7777 != 0o600 {
		t.Errorf("other/mode has mode %o", st.Mode&0o7777)
	}
	if st := lstatT(t, filepath.Join(dst, "other/mtime")); st.Mtim.Nano() != oldTime.Add(time.Second).UnixNano() {
		t.Errorf("other/mtime has mtime %d", st.Mtim.Nano())
	}
	if st := lstatT(t, filepath.Join(dst, "other/owner")); st.Uid != 4321 || st.Gid != 4321 {
		t.Errorf("other/owner is owned by %d:%d", st.Uid, st.Gid)
	}
	buf := make([]byte, 16)
	if n, err := unix.Lgetxattr(filepath.Join(dst, "other/xattr"), "user.note", buf); err != nil || string(buf[:n]) != "mine" {
		t.Errorf("other/xattr: user.note %q, %v", buf[:n], err)
	}
	for _, rel := range append(same, "other/mode") {
		if _, err := unix.Lgetxattr(filepath.Join(dst, rel), "user.note", buf); err == nil {
			t.Errorf("%s got the extended attribute of another file", rel)
		}
	}
	// Four same-metadata files: one written, three linked. The four others
	// each get data of their own (linked among themselves they could not be).
	if sum.Copied != 5 || sum.DedupLinked != 3 || sum.Deduped != 3 || sum.DedupCloned != 0 {
		t.Errorf("copied %d, deduplicated %d (hard-linked %d, cloned %d); want 5 written, 3 hard-linked",
			sum.Copied, sum.Deduped, sum.DedupLinked, sum.DedupCloned)
	}
	if sum.Linked != 0 {
		t.Errorf("hardlinked %d: that count is for the source's own hard links", sum.Linked)
	}
	if sum.Verified != 8 {
		t.Errorf("verified %d, want all 8 files read back", sum.Verified)
	}
	sameTree(t, src, dst)

	t.Run("rerun", func(t *testing.T) {
		all := append(append([]string{}, same...), "other/mode", "other/mtime", "other/xattr", "other/owner")
		ino := inodes(t, dst, all)
		sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst})
		if err != nil {
			t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
		}
		if sum.Copied != 0 || sum.Deduped != 0 || sum.Skipped != 8 || sum.MetaUpdated != 0 {
			t.Errorf("rerun: copied %d, deduplicated %d, skipped %d, metadata %d; want all 8 skipped",
				sum.Copied, sum.Deduped, sum.Skipped, sum.MetaUpdated)
		}
		for rel, n := range inodes(t, dst, all) {
			if n != ino[rel] {
				t.Errorf("rerun replaced %s", rel)
			}
		}
	})
}

// TestDedupHardlinkFromDestination: the destination holds a file of the
// same content but other metadata (known from the hash cache). New files
// cannot be linked to it, but they are linked among themselves.
func TestDedupHardlinkFromDestination(t *testing.T) {
	t.Parallel()
	base := ext4Dir(t)
	src, dst := filepath.Join(base, "src"), filepath.Join(base, "dst")
	db := filepath.Join(t.TempDir(), "hashes.db")
	data := pattern(78, 50000)
	writeFile(t, filepath.Join(src, "first"), data)
	noErr(t, os.Chmod(filepath.Join(src, "first"), 0o600))
	setTimes(t, filepath.Join(src, "first"), oldTime)
	settleSources()
	if sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: dst}); err != nil || sum.Copied != 1 {
		t.Fatalf("first run: %v, copied %d", err, sum.Copied)
	}

	news := []string{"new1", "new2", "sub/new3"}
	for _, rel := range news {
		writeFile(t, filepath.Join(src, rel), data)
		setTimes(t, filepath.Join(src, rel), oldTime)
	}
	settleSources()
	sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: dst})
	if err != nil {
		t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
	}
	if st := lstatT(t, filepath.Join(dst, "first")); st.Nlink != 1 || st.Mode&0o7777 != 0o600 {
		t.Errorf("first: %d links, mode %o; want it alone with its own mode", st.Nlink, st.Mode&0o7777)
	}
	ino := inodes(t, dst, news)
	for _, rel := range news[1:] {
		if ino[rel] != ino[news[0]] {
			t.Errorf("%s and %s have the same content and metadata but are different inodes", news[0], rel)
		}
	}
	if sum.Skipped != 1 || sum.Copied != 1 || sum.DedupLinked != 2 {
		t.Errorf("skipped %d, copied %d, hard-linked %d; want first skipped, one new file written and two linked to it",
			sum.Skipped, sum.Copied, sum.DedupLinked)
	}
	sameTree(t, src, dst)
}

// TestDedupNeverLinksStaleDestination: a destination file the hash cache
// recorded is changed afterwards with its size and mtime restored. A later
// run that brings a new file with the old content must not share the
// changed file's data: the new file gets the right bytes, an inode of its
// own, and its own times. A destination file that did not change is shared.
// With the cache entry made to match the changed file (bit rot that
// leaves the stat alone), the target is read again before it is shared,
// in every verify mode, and (with a read-back) so is the new name.
func TestDedupNeverLinksStaleDestination(t *testing.T) {
	t.Parallel()
	for _, v := range []copyengine.VerifyMode{copyengine.VerifyDevice, copyengine.VerifyOff} {
		for _, rot := range []bool{false, true} {
			name := "verify=" + string(v)
			if rot {
				name += "/cache lies"
			}
			t.Run(name, func(t *testing.T) {
				base := ext4Dir(t)
				src, dst := filepath.Join(base, "src"), filepath.Join(base, "dst")
				db := filepath.Join(t.TempDir(), "hashes.db")
				oldData, keepData := pattern(90, 60000), pattern(91, 60001)
				for rel, data := range map[string][]byte{"changed": oldData, "kept": keepData} {
					writeFile(t, filepath.Join(src, rel), data)
					setTimes(t, filepath.Join(src, rel), oldTime)
				}
				settleSources()
				// The first run verifies: only verified copies are recorded.
				if sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: dst}); err != nil || sum.Copied != 2 {
					t.Fatalf("first run: %v, copied %d", err, sum.Copied)
				}

				// The destination's copy changes; its size and mtime are put back.
				changed := filepath.Join(dst, "changed")
				newData := pattern(92, len(oldData))
				noErr(t, os.WriteFile(changed, newData, 0o644))
				setTimes(t, changed, oldTime)
				if rot {
					recordInCache(t, db, changed, verify.Bytes(oldData))
				}
				// The source no longer has it (so this run leaves it alone) and
				// has two new files: one with its old content, one with the
				// content of the file that did not change.
				noErr(t, os.Remove(filepath.Join(src, "changed")))
				// Both have the metadata of the files whose content they hold, so
				// that only the content decides whether they may be linked.
				for rel, data := range map[string][]byte{"new-old": oldData, "new-kept": keepData} {
					writeFile(t, filepath.Join(src, rel), data)
					setTimes(t, filepath.Join(src, rel), oldTime)
				}
				settleSources()

				sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: dst, Verify: v})
				if err != nil {
					t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
				}
				got, err := os.ReadFile(filepath.Join(dst, "new-old"))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, oldData) {
					t.Fatal("new-old does not hold its source's bytes: it shares the changed file's data")
				}
				a, b := lstatT(t, changed), lstatT(t, filepath.Join(dst, "new-old"))
				if a.Ino == b.Ino {
					t.Error("new-old is a hard link to the changed file")
				}
				if cur, _ := os.ReadFile(changed); !bytes.Equal(cur, newData) {
					t.Error("the changed destination file was rewritten; the source no longer has it")
				}
				if sum.Mismatches != 0 || sum.Failed != 0 {
					t.Errorf("mismatches %d, failed %d; want none", sum.Mismatches, sum.Failed)
				}
				// With a truthful cache the stat check refuses the changed file
				// before anything is linked. (When the cache lies, the read-back
				// of the new name is what catches it.)
				if !rot {
					if b.Mtim.Nano() != oldTime.UnixNano() {
						t.Errorf("new-old has mtime %d, want its source's %d", b.Mtim.Nano(), oldTime.UnixNano())
					}
					if sum.Copied != 1 || sum.Deduped != 1 || sum.DedupLinked != 1 {
						t.Errorf("copied %d, deduplicated %d (hard-linked %d); want new-old written and new-kept linked to kept",
							sum.Copied, sum.Deduped, sum.DedupLinked)
					}
				}
				if a, b := lstatT(t, filepath.Join(dst, "kept")), lstatT(t, filepath.Join(dst, "new-kept")); a.Ino != b.Ino {
					t.Error("new-kept was not linked to kept, which holds its content unchanged")
				}
				if got, _ := os.ReadFile(filepath.Join(dst, "new-kept")); !bytes.Equal(got, keepData) {
					t.Error("new-kept does not hold its source's bytes")
				}
			})
		}
	}
}

// recordInCache records in the cache at db that the file at path, as it is
// now, holds content with digest sum.
func recordInCache(t *testing.T, db, path string, sum verify.Sum) {
	t.Helper()
	hc, err := hashcache.Open(db, hashcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The engine keys entries by the real path of the destination.
	if real, err := filepath.EvalSymlinks(path); err != nil || real != path {
		t.Fatalf("%s is not a real path (%s, %v): the cache entry would not be found", path, real, err)
	}
	st := lstatT(t, path)
	vol, err := hashcache.Identify(filepath.Dir(path))
	if err != nil || vol.Volume == 0 {
		t.Fatalf("volume of %s: %+v, %v", path, vol, err)
	}
	hc.Put(path, hashcache.Entry{Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: st.Ino, Sum: sum, HashedAt: time.Now().UnixNano(), Volume: vol.Volume})
	noErr(t, hc.Close())
}

// TestDedupOnlyCollidingSizesHashed: a file whose size no other file has is
// read once, for the copy; only files whose size collides are read first
// for their digest. (The files are larger than the read buffer, so that a
// file read for its digest is read again to be written.)
func TestDedupOnlyCollidingSizesHashed(t *testing.T) {
	t.Parallel()
	base := ext4Dir(t)
	src := filepath.Join(base, "src")
	var unique, colliding int64
	for i := 0; i < 5; i++ {
		size := verify.BufSize + 4099*(i+1)
		writeFile(t, filepath.Join(src, fmt.Sprintf("u%d", i)), pattern(int64(200+i), size))
		unique += int64(size)
	}
	const size = verify.BufSize * 3 / 2
	for i := 0; i < 3; i++ { // one size, three contents: no duplicate
		writeFile(t, filepath.Join(src, fmt.Sprintf("c%d", i)), pattern(int64(300+i), size))
		colliding += size
	}
	settleSources()
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: filepath.Join(base, "dst")})
	if err != nil {
		t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
	}
	// Every file is read to be copied and read back once written. The first
	// file of a size is copied in one pass; the two others of its size are
	// read once more, first, for their digest.
	want := 2*(unique+colliding) + 2*size
	if sum.BytesRead != want || sum.Copied != 8 || sum.Deduped != 0 {
		t.Errorf("read %d bytes, copied %d, deduplicated %d; want %d bytes read (unique sizes read once), 8 copied",
			sum.BytesRead, sum.Copied, sum.Deduped, want)
	}
}

// TestDedupOffAndCloneOnExt4: --dedup=off writes every file; --dedup=clone
// on ext4, which cannot clone, copies the duplicates and says why.
func TestDedupOffAndCloneOnExt4(t *testing.T) {
	t.Parallel()
	base := ext4Dir(t)
	src := filepath.Join(base, "src")
	data := pattern(80, 40000)
	names := []string{"a", "b", "c"}
	for _, n := range names {
		writeFile(t, filepath.Join(src, n), data)
		setTimes(t, filepath.Join(src, n), oldTime)
	}
	settleSources()
	for _, mode := range []dedup.Mode{dedup.Off, dedup.Clone} {
		t.Run(string(mode), func(t *testing.T) {
			dst := filepath.Join(base, "dst-"+string(mode))
			sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Dedup: mode})
			if err != nil {
				t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
			}
			if sum.Copied != 3 || sum.Bytes != 3*40000 || sum.Deduped != 0 || sum.BytesNotWritten != 0 || sum.DiskSaved != 0 {
				t.Errorf("copied %d (%d bytes), deduplicated %d, not written %d, saved %d; want all 3 written",
					sum.Copied, sum.Bytes, sum.Deduped, sum.BytesNotWritten, sum.DiskSaved)
			}
			for _, n := range names {
				if st := lstatT(t, filepath.Join(dst, n)); st.Nlink != 1 {
					t.Errorf("%s has %d links", n, st.Nlink)
				}
			}
			switch {
			case mode == dedup.Clone && !strings.Contains(sum.DedupNote, "cannot clone"):
				t.Errorf("dedup note %q; want it to say the filesystem cannot clone", sum.DedupNote)
			case mode == dedup.Off && sum.DedupNote != "":
				t.Errorf("dedup note %q with --dedup=off", sum.DedupNote)
			}
			sameTree(t, src, dst)
		})
	}
}

// TestDedupHardlinkLimit runs into ext4's limit of 65000 links per inode:
// the destination holds a file (known from the hash cache) that already
// has 64999 names. The first new file with its content takes the last
// link; the next fails with EMLINK and is copied instead, the files after
// it are linked to that copy, and the run says why.
func TestDedupHardlinkLimit(t *testing.T) {
	t.Parallel()
	fs := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 64 << 20})
	src, dst := fs.Path("src"), fs.Path("dst")
	db := filepath.Join(t.TempDir(), "hashes.db")
	data := pattern(81, 5000)
	writeFile(t, filepath.Join(src, "t"), data)
	setTimes(t, filepath.Join(src, "t"), oldTime)
	settleSources()
	if sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: dst}); err != nil || sum.Copied != 1 {
		t.Fatalf("first run: %v, copied %d", err, sum.Copied)
	}
	target := filepath.Join(dst, "t")
	links := fs.Path("links")
	noErr(t, os.Mkdir(links, 0o755))
	for i := 2; i < 65000; i++ {
		if err := os.Link(target, filepath.Join(links, fmt.Sprint(i))); err != nil {
			t.Fatalf("link %d: %v", i, err)
		}
	}
	// The links moved its ctime; its content is what the cache recorded.
	recordInCache(t, db, target, verify.Bytes(data))

	news := []string{"n1", "n2", "n3", "n4"}
	for _, rel := range news {
		writeFile(t, filepath.Join(src, rel), data)
		setTimes(t, filepath.Join(src, rel), oldTime)
	}
	settleSources()
	sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: dst, Dedup: dedup.Hardlink})
	if err != nil {
		t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
	}
	if sum.Copied != 1 || sum.DedupLinked != 3 || sum.Failed != 0 {
		t.Errorf("copied %d, hard-linked %d, failed %d; want n1 linked to t, n2 copied, n3 and n4 linked to n2",
			sum.Copied, sum.DedupLinked, sum.Failed)
	}
	if !strings.Contains(sum.DedupNote, "hard links are not possible") || !strings.Contains(sum.DedupNote, "too many links") {
		t.Errorf("dedup note %q; want it to say that links failed and why", sum.DedupNote)
	}
	if st := lstatT(t, target); st.Nlink != 65000 {
		t.Errorf("t has %d links, want 65000", st.Nlink)
	}
	ino := inodes(t, dst, news)
	if ino["n1"] != lstatT(t, target).Ino || ino["n2"] == ino["n1"] || ino["n3"] != ino["n2"] || ino["n4"] != ino["n2"] {
		t.Errorf("inodes: t %d, %v; want n1 on t, n3 and n4 on n2", lstatT(t, target).Ino, ino)
	}
	for _, rel := range news {
		if got, _ := os.ReadFile(filepath.Join(dst, rel)); !bytes.Equal(got, data) {
			t.Errorf("%s does not hold its source's bytes", rel)
		}
	}
}

// TestDedupSkipsGoneDestinationTargets: the hash cache remembers a
// destination file that is deleted, or replaced by another file of the same
// size, before the next run. A source file of its size must not be read an
// extra time for a digest to match against a file that is no longer what
// the cache saw: it is read once to be copied and once to be read back, as
// a file with a unique size is.
func TestDedupSkipsGoneDestinationTargets(t *testing.T) {
	t.Parallel()
	const size = 3 * verify.BufSize
	for _, c := range []struct {
		name   string
		change func(t *testing.T, old string)
	}{
		{"deleted", func(t *testing.T, old string) { noErr(t, os.Remove(old)) }},
		{"replaced", func(t *testing.T, old string) {
			noErr(t, os.Remove(old))
			writeFile(t, old, pattern(92, size)) // a new inode and mtime
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := ext4Dir(t)
			src, dst := filepath.Join(base, "src"), filepath.Join(base, "dst")
			db := filepath.Join(t.TempDir(), "hashes.db")
			writeFile(t, filepath.Join(src, "old"), pattern(90, size))
			setTimes(t, filepath.Join(src, "old"), oldTime) // not racy: the cache keeps it
			settleSources()
			if sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: dst}); err != nil || sum.Copied != 1 {
				t.Fatalf("first run: %v, copied %d", err, sum.Copied)
			}
			noErr(t, os.Remove(filepath.Join(src, "old")))
			c.change(t, filepath.Join(dst, "old"))
			writeFile(t, filepath.Join(src, "new"), pattern(91, size))
			settleSources()
			sum, err := runCached(t, db, copyengine.Options{Sources: []string{src}, Dest: dst})
			if err != nil {
				t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
			}
			if sum.Copied != 1 || sum.BytesRead != 2*size {
				t.Errorf("copied %d, read %d bytes; want 1 copied and %d bytes read (copy and read-back only)", sum.Copied, sum.BytesRead, 2*size)
			}
			if got, err := os.ReadFile(filepath.Join(dst, "new")); err != nil || !bytes.Equal(got, pattern(91, size)) {
				t.Errorf("dst/new does not hold the source's bytes (%v)", err)
			}
		})
	}
}

// TestDedupUnshareableCopiedInPlace: on ext4, which cannot clone, a file
// whose content repeats another's but whose mtime differs cannot share its
// inode. It must be written by the copy workers from the bytes read for its
// digest, like any file, not held back to be read and copied again after
// the others: the source bytes are read once per file, plus the read-back.
func TestDedupUnshareableCopiedInPlace(t *testing.T) {
	t.Parallel()
	base := ext4Dir(t)
	src, dst := filepath.Join(base, "src"), filepath.Join(base, "dst")
	const size = 100000
	data := pattern(95, size)
	for i, name := range []string{"a", "b", "c"} {
		writeFile(t, filepath.Join(src, name), data)
		setTimes(t, filepath.Join(src, name), oldTime.Add(time.Duration(i)*time.Hour))
	}
	settleSources()
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Verify: copyengine.VerifyCache})
	if err != nil {
		t.Fatalf("Run: %v (failures %v)", err, sum.Failures)
	}
	if sum.Copied != 3 || sum.Deduped != 0 || sum.BytesRead != 6*size {
		t.Errorf("copied %d, deduplicated %d, read %d bytes; want 3 copied, none shared, %d bytes read", sum.Copied, sum.Deduped, sum.BytesRead, 6*size)
	}
	sameTree(t, src, dst)
}
