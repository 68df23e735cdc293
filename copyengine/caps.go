package copyengine

import (
	"fmt"
	"os"

	"github.com/fastcopy/fastcopy/copyengine/fileio"
	"github.com/fastcopy/fastcopy/hashcache"
)

// destCaps is what the destination's filesystem can keep, learned once
// before the first byte is written, so that what it cannot keep is decided
// up front instead of failing file after file.
type destCaps struct {
	fsType  string // as hashcache.FSType names it ("vfat", "fuseblk", ...), "" when unknown
	noLinks bool   // link(2) is refused: further names of a source inode are copied separately
	// seen holds the source inodes with several names met so far, when
	// noLinks: the first name is copied, the others are copied again.
	seen map[devIno]bool
}

// probeCaps learns what the destination root d can keep. It writes only a
// temporary it removes again, under a temporary's name (a leftover is
// removed by the next run like any other).
func (e *engine) probeCaps(d *fileio.Dir) {
	e.caps.seen = map[devIno]bool{}
	if t, err := hashcache.FSType(e.dstRootPath); err == nil {
		e.caps.fsType = t
	}
	e.caps.noLinks = !linksWork(d)
}

// linksWork reports whether d's filesystem makes hard links: it makes a
// file and a second name for it. exFAT and FAT have no hard links
// (exfat-fuse and the kernel's vfat say EPERM, others ENOTSUP or ENOSYS).
// Any other failure says nothing about links and counts as "they work":
// the files then fail, or not, as they would without the probe.
func linksWork(d *fileio.Dir) bool {
	a := tempName(fmt.Sprintf("fastcopy-link-probe-%d", os.Getpid()))
	b := tempName(fmt.Sprintf("fastcopy-link-probe-%d-2", os.Getpid()))
	f, err := d.CreateTemp(a)
	if err != nil {
		return true
	}
	f.Close()
	defer d.Remove(a)
	err = d.Link(d, a, b)
	if err == nil {
		_ = d.Remove(b)
		return true
	}
	return !(fileio.IsPermission(err) || fileio.IsFallback(err))
}

// fsName names the destination's filesystem in messages: by its mount
// point's path, with its type where known.
func (e *engine) fsName() string {
	if e.caps.fsType == "" {
		return fmt.Sprintf("the filesystem of %q", e.dstRootPath)
	}
	return fmt.Sprintf("the filesystem of %q (%s)", e.dstRootPath, e.caps.fsType)
}

// linkCopy reports whether en, a name of a source inode with several, is
// to be copied as a file of its own because the destination has no hard
// links: every name after the first one met.
func (e *engine) linkCopy(st *fileio.Stat) bool {
	k := devIno{st.Dev, st.Ino}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.caps.seen[k] {
		return true
	}
	e.caps.seen[k] = true
	return false
}

// noteNotKept adds to the summary, once, what the destination could not
// keep.
func (e *engine) noteNotKept() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if n := e.sum.LinkCopies; n > 0 {
		e.sum.NotKept = append(e.sum.NotKept, fmt.Sprintf("hard links: %s has none; %d further names of linked source files were copied as separate verified files", e.fsName(), n))
	}
}
