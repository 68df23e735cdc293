package backupdir

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/refusal"
	"github.com/fastcopy/fastcopy/verify"
)

// Config is the whole input of --backup-dir: where it is, what it must
// not overlap, and what it needs of the run that keeps old versions there.
type Config struct {
	Arg     string   // --backup-dir as the user gave it
	Dest    string   // DEST
	Sources []Source // the source roots that are directories

	// Resolve is the path arg as the kernel resolves it, or the
	// refusal of a path that cannot be resolved.
	Resolve func(arg string) (string, error)
	// Inside reports whether the path a names the place b names or one
	// inside it, by identity (a symlink, a bind mount or a second mount
	// puts a directory at another path); an error where it cannot tell.
	Inside func(a, b string) (bool, error)
	// SkipWrite is the dry run's gate (the engine's one), asked at each
	// keeping; nil: the run writes.
	SkipWrite func() bool
	// CheckInode reports whether DEST's inode numbers name its files for
	// as long as they exist (not on FAT, exFAT, FUSE drivers that
	// renumber the inodes the kernel forgets). Asked as a version is
	// copied, once DEST is open.
	CheckInode func() bool
	// TempName is the temporary name a copy kept under target is written
	// under, free of what taken holds.
	TempName func(target string, taken func(string) bool) string
	// Buffer lends a read buffer; Release takes it back.
	Buffer  func() *[]byte
	Release func(*[]byte)
	// ModesLost reports whether err, from setting a copy's mode, is a
	// filesystem's having no modes (said once by the run) rather than a
	// failure.
	ModesLost func(err error) bool
	// Kept is told of the old version of rel kept, and (removed) of its
	// removal from DEST; in a dry run, of what would be done.
	Kept func(rel string, removed bool)
}

// dry reports whether this is a dry run (SkipWrite; nil: the run writes).
func (c *Config) dry() bool { return c.SkipWrite != nil && c.SkipWrite() }

// Source is a source root that is a directory: as given, and its path.
type Source struct {
	Arg, Dir string
}

// Dir is the backup directory of a run, checked and (not in a dry run)
// open.
type Dir struct {
	cfg  Config
	mu   sync.Mutex // one Preserve at a time: names in the backup are chosen free
	root *fileio.Dir
	path string
	// noLinks holds the filesystems (by device) found to refuse hard
	// links (exFAT, FAT: EPERM; others ENOTSUP, ENOSYS): their old
	// versions are copied, without trying link(2) again for each (under mu).
	noLinks map[uint64]bool
}

func quote(s string) string { return `"` + s + `"` }

// Open refuses a backup directory inside DEST (--delete would count it as
// extra, and the copy would see it) or inside a source (it would be
// copied), or one that holds DEST or a source (old versions, kept under
// their paths relative to DEST, would land among the copies or in the
// source), and makes and opens it (not in a dry run). Each is decided by
// identity (Config.Inside).
func Open(cfg Config) (*Dir, error) {
	bd, err := cfg.Resolve(cfg.Arg)
	if err != nil {
		return nil, err
	}
	if bd, err = filepath.Abs(bd); err != nil {
		return nil, refusal.New(cfg.Arg, "cannot resolve --backup-dir: "+err.Error(), "name a directory outside the destination")
	}
	if in, err := cfg.Inside(bd, cfg.Dest); err == nil && in {
		return nil, refusal.New(cfg.Arg, "is inside the destination "+quote(cfg.Dest)+": the copy would meet the old versions as files the source lacks", "put the backup directory outside the destination, e.g. beside it")
	}
	if in, err := cfg.Inside(cfg.Dest, bd); err == nil && in {
		return nil, refusal.New(cfg.Arg, "holds the destination "+quote(cfg.Dest)+": the destination is inside it, and old versions kept there under their paths in the destination would land among the copies", "put the backup directory beside the destination, not above it")
	}
	for _, r := range cfg.Sources {
		if in, err := cfg.Inside(bd, r.Dir); err == nil && in {
			return nil, refusal.New(cfg.Arg, "is inside the source "+quote(r.Arg)+": the old versions would be copied", "put the backup directory outside the source")
		}
		if in, err := cfg.Inside(r.Dir, bd); err == nil && in {
			return nil, refusal.New(cfg.Arg, "holds the source "+quote(r.Arg)+": the source is inside it, and old versions kept there would be written into the source", "put the backup directory outside the source")
		}
	}
	b := &Dir{cfg: cfg}
	if cfg.dry() { // a dry run: nothing is made, Open only checks
		return b, nil
	}
	if err := os.MkdirAll(bd, 0o755); err != nil {
		return nil, refusal.New(cfg.Arg, "cannot create --backup-dir: "+refusal.Text(err), "check its parent exists and is writable")
	}
	d, err := fileio.OpenDir(bd)
	if err != nil {
		return nil, refusal.New(cfg.Arg, "cannot open --backup-dir: "+refusal.Text(err), "check it is a directory you can write to")
	}
	b.root, b.path = d, bd
	return b, nil
}

// Close closes the backup directory.
func (b *Dir) Close() {
	if b != nil && b.root != nil {
		b.root.Close()
	}
}

// IsOpen reports whether the backup directory is open: not in a dry run.
func (b *Dir) IsOpen() bool { return b != nil && b.root != nil }

// Path is the backup directory's absolute path ("" in a dry run).
func (b *Dir) Path() string { return b.path }

// Syncfs flushes the filesystem the backup directory is on.
func (b *Dir) Syncfs() error { return fileio.Syncfs(b.root) }

// parentRel is the directory holding rel ("" for the root).
func parentRel(rel string) string {
	d := path.Dir(rel)
	if d == "." || d == "/" {
		return ""
	}
	return strings.TrimSuffix(d, "/")
}

// openParent opens, beneath the backup root and making what is missing,
// the directory that holds rel's backup.
func (b *Dir) openParent(rel string) (*fileio.Dir, error) {
	cur, err := b.root.OpenSub(".")
	if err != nil {
		return nil, err
	}
	dir := parentRel(rel)
	if dir == "" {
		return cur, nil
	}
	for _, part := range strings.Split(dir, "/") {
		next, err := cur.OpenSub(part)
		if fileio.IsNotExist(err) {
			if err = cur.Mkdir(part, 0o755); err == nil || fileio.IsExist(err) {
				next, err = cur.OpenSub(part)
			}
		}
		cur.Close()
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return cur, nil
}

// freeName is name, or name.~N~ for the first N not taken in bd (as
// cp --backup=numbered names them): an older version kept there is never
// replaced.
//
// A look-up that fails for another reason than a missing name (EIO on a
// filesystem shut down, a drive gone) is an error: taken for a name in
// use, it made this loop go on without end.
func freeName(bd *fileio.Dir, name string, n int) (string, error) {
	free := func(c string) (bool, error) {
		_, err := bd.Lstat(c)
		if fileio.IsNotExist(err) {
			return true, nil
		}
		return false, err
	}
	if n == 0 {
		if ok, err := free(name); ok || err != nil {
			return name, err
		}
		n = 1
	}
	for ; ; n++ {
		c := name + ".~" + strconv.Itoa(n) + "~"
		if ok, err := free(c); ok || err != nil {
			return c, err
		}
	}
}

type devIno struct{ dev, ino uint64 }

// Preserve keeps the entry name of dir (rel in DEST, of stat st) in the
// backup directory, durably, and then removes it from dir when remove is
// set. On the same filesystem it is a hard link (the entry itself: a
// symlink is linked as a symlink, never followed); elsewhere, or where
// the filesystem has no hard links, a copy written under a temporary
// name, flushed, read back and renamed. The
// backup's directory is flushed before the entry is removed or replaced.
func (b *Dir) Preserve(dir *fileio.Dir, name, rel string, st fileio.Stat, remove bool) error {
	if b.cfg.dry() {
		if err := b.wouldKeep(st); err != nil {
			return err
		}
		b.cfg.Kept(rel, remove)
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	bd, err := b.openParent(rel)
	if err != nil {
		return err
	}
	defer bd.Close()
	want, held, err := b.linkOrCopy(bd, dir, name, filepath.Base(rel), st)
	if err != nil {
		return err
	}
	if held != nil {
		// Held open until the name is checked: a FUSE driver that
		// renumbers the inodes the kernel forgets (exfat-fuse,
		// fusefat) keeps this one's number while it is open. Closed
		// before the name is removed, which FUSE would otherwise turn
		// into a rename to a .fuse_hidden name.
		defer func() {
			if held != nil {
				held.Close()
			}
		}()
	}
	if err := bd.AsFile().Sync(); err != nil {
		return err
	}
	if remove {
		cur, err := dir.Lstat(name)
		if err != nil || (devIno{cur.Dev, cur.Ino}) != want {
			return fmt.Errorf("%q changed as it was kept; left in place", name)
		}
		if held != nil {
			held.Close()
			held = nil
		}
		if err := dir.Remove(name); err != nil {
			return err
		}
	}
	b.cfg.Kept(rel, remove)
	return nil
}

// linkOrCopy keeps the entry name of dir (of stat st) in bd under base or
// the first free name.~N~: a hard link, or a copy (copyInto) where link(2)
// cannot make one. It returns the identity name must still have for its
// removal, and a regular file copied, open (the caller closes it).
func (b *Dir) linkOrCopy(bd, dir *fileio.Dir, name, base string, st fileio.Stat) (devIno, *fileio.File, error) {
	want := devIno{st.Dev, st.Ino}
	var target string
	var err error
	if b.noLinks[st.Dev] {
		if target, err = freeName(bd, base, 0); err != nil {
			return want, nil, err
		}
		err = fileio.ErrUnsupported
	} else {
		for n := 0; ; n++ {
			if target, err = freeName(bd, base, n); err != nil {
				return want, nil, err
			}
			err = bd.Link(dir, name, target)
			if !fileio.IsExist(err) {
				break
			}
		}
	}
	switch {
	case err == nil:
		if got, serr := bd.Lstat(target); serr != nil || (devIno{got.Dev, got.Ino}) != want {
			_ = bd.Remove(target)
			return want, nil, fmt.Errorf("%q was replaced by another file as it was kept", name)
		}
		return want, nil, nil
	case fileio.IsCrossDevice(err) || linkRefused(err):
		if !fileio.IsCrossDevice(err) && !errors.Is(err, syscall.EMLINK) {
			if b.noLinks == nil {
				b.noLinks = map[uint64]bool{}
			}
			b.noLinks[st.Dev] = true
		}
		held, err := b.copyInto(bd, target, dir, name, st)
		if err != nil {
			return want, nil, err
		}
		if held != nil {
			if hst, err := held.Stat(); err == nil {
				want = devIno{hst.Dev, hst.Ino}
			}
		}
		return want, held, nil
	default:
		return want, nil, err
	}
}

// linkRefused reports whether err, link(2)'s, says the backup cannot be a
// hard link, so that it is to be a copy: the filesystem has none (exFAT
// and FAT say EPERM, others ENOTSUP or ENOSYS), or the file has as many
// names as it may (EMLINK). As root, EPERM is not the protected_hardlinks
// refusal; either way the copy made instead is verified.
func linkRefused(err error) bool {
	return fileio.IsPermission(err) || fileio.IsFallback(err) || errors.Is(err, syscall.EMLINK)
}

// copyInto copies the regular file or symlink name of dir (which must be
// st) to target in bd, on another filesystem: written under a temporary
// name, flushed, read back and compared, then renamed. Other types are
// not kept elsewhere: the entry is left in place. A regular file is
// returned open (the caller closes it): the version kept is the one it
// holds, and while it is open its inode number is the name's when the
// name still holds it.
func (b *Dir) copyInto(bd *fileio.Dir, target string, dir *fileio.Dir, name string, st fileio.Stat) (held *fileio.File, err error) {
	// Whatever holds the temporary's name is left alone: a name proves
	// nothing, and what a backup directory holds is kept versions. The
	// copy takes a name that is free.
	exists := func(t string) bool { _, err := bd.Lstat(t); return err == nil }
	tmp := b.cfg.TempName(target, exists)
	switch {
	case st.IsSymlink():
		t, err := dir.Readlink(name)
		if err != nil {
			return nil, err
		}
		if err := bd.Symlink(t, tmp); err != nil {
			return nil, err
		}
	case st.IsRegular():
		if held, err = b.copyRegular(bd, tmp, target, dir, name, st); err != nil {
			return nil, err
		}
	default:
		return nil, errNotKeptElsewhere(st)
	}
	if err := bd.Rename(tmp, bd, target); err != nil {
		_ = bd.Remove(tmp)
		if held != nil {
			held.Close()
		}
		return nil, err
	}
	return held, nil
}

// copyRegular writes the regular file name of dir (which must be st, or
// the same file renumbered) to tmp in bd, flushed, read back and compared
// against what was read (a mismatch is reported for target), with its
// times and mode. It returns the source open.
func (b *Dir) copyRegular(bd *fileio.Dir, tmp, target string, dir *fileio.Dir, name string, st fileio.Stat) (held *fileio.File, err error) {
	src, err := dir.Open(name, false)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			src.Close()
		}
	}()
	cur, err := src.Stat()
	if err != nil {
		return nil, err
	}
	// Opened after st was taken: a driver that renumbers forgotten
	// inodes (DEST's CheckInode false: FAT, exFAT, FUSE) may show the
	// same file under another number, so there the version kept is
	// the one opened, of the same type, size and mtime; elsewhere
	// another number is another file.
	renumbered := (devIno{cur.Dev, cur.Ino}) != (devIno{st.Dev, st.Ino})
	if !cur.IsRegular() || cur.Dev != st.Dev || cur.Size != st.Size || renumbered && (b.cfg.CheckInode() || cur.Mtime != st.Mtime) {
		return nil, fmt.Errorf("%q was replaced by another file as it was kept", name)
	}
	st = cur
	held = src
	out, err := fileio.CreateTemp(bd, tmp)
	if err != nil {
		return nil, err
	}
	bp := b.cfg.Buffer()
	sum, _, err := verify.Stream(src, st.Size, false, *bp, func(p []byte, off int64) error { return out.WriteAt(p, off) })
	if err == nil {
		err = out.Sync()
	}
	if err == nil {
		_ = out.DropCache()
		var got verify.Sum
		if got, _, err = verify.HashFile(out, st.Size, false, *bp); err == nil && got != sum {
			err = &refusal.Mismatch{Path: target, Want: verify.Hex(sum), Got: verify.Hex(got)}
		}
	}
	if err == nil {
		err = out.SetTimes(st.Atime, st.Mtime)
	}
	if err == nil {
		// A backup on a filesystem without modes (FAT answers
		// ENOSYS) keeps the data, and the loss is said once.
		if err = out.Chmod(st.Mode & 0o7777); err != nil && b.cfg.ModesLost(err) {
			err = nil
		}
	}
	b.cfg.Release(bp)
	out.Close()
	if err != nil {
		_ = bd.Remove(tmp)
		return nil, err
	}
	return held, nil
}

// errNotKeptElsewhere says that an entry of st's type, neither a regular
// file nor a symlink, cannot be kept on another filesystem than DEST's.
func errNotKeptElsewhere(st fileio.Stat) error {
	return fmt.Errorf("a %s cannot be kept on another filesystem; left in place", fileio.Describe(st.Mode))
}

// wouldKeep is, in a dry run, Preserve's judgement of whether an entry
// of stat st can be kept: on another filesystem than DEST's (the backup
// directory's nearest existing one) a copy is made, which only a regular
// file or a symlink can be.
func (b *Dir) wouldKeep(st fileio.Stat) error {
	if st.IsRegular() || st.IsSymlink() {
		return nil
	}
	bd, err := filepath.Abs(b.cfg.Arg)
	if err != nil {
		return err
	}
	d, err := fileio.OpenDir(fileio.NearestExisting(bd))
	if err != nil {
		return err
	}
	at, err := d.Stat()
	d.Close()
	if err != nil {
		return err
	}
	if at.Dev != st.Dev {
		return errNotKeptElsewhere(st)
	}
	return nil
}

// BeforeReplace keeps the file a copy is about to replace (name in dir),
// right before the publishing rename, after the copy was read back and
// flushed: a crash between the two leaves both versions. Its error is the
// entry's failure, saying so.
func (b *Dir) BeforeReplace(dir *fileio.Dir, name, rel string) error {
	if err := b.beforeReplace(dir, name, rel); err != nil {
		return fmt.Errorf("--backup-dir: keeping the version it replaces: %w", err)
	}
	return nil
}

func (b *Dir) beforeReplace(dir *fileio.Dir, name, rel string) error {
	if b == nil || dir == nil || (b.root == nil && !b.cfg.dry()) {
		return nil
	}
	st, err := dir.Lstat(name)
	if fileio.IsNotExist(err) {
		return nil // nothing is replaced
	}
	if err != nil {
		return err
	}
	if st.IsDir() {
		return nil // the rename fails on a directory
	}
	return b.Preserve(dir, name, rel, st, false)
}

// CheckArg refuses a --backup-dir given as blanks: it names no directory.
func CheckArg(arg string) error {
	if arg != "" && strings.TrimSpace(arg) == "" {
		return &refusal.Error{Msg: "--backup-dir is empty; name a directory"}
	}
	return nil
}
