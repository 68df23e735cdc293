package copyengine

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// What a run may remove as its own leftover is what a run made: a name
// alone proves nothing. A source file can be called ".IMG_1.jpg.fastcopy-tmp",
// and its copy in the destination is the user's file like any other; and
// FAT and exFAT keep no extended attribute that could mark a temporary. So
// each run writes down, in a small file of the destination root
// (madeName), every temporary file and staged directory it creates there,
// by its path below the root (and its inode number, which is checked where
// the filesystem keeps inode numbers from one mount to the next). A later
// run into the same root removes, resumes or leaves out of --delete only
// an entry that the record names, of the type it names, with the inode it
// names where that can be known; anything else that merely looks like a
// temporary is the user's: it is copied over only when the source names
// it, deleted only by --delete as any other extra, and otherwise left
// alone and reported (ActLeaveTemp); the copy of a file beside it takes
// another temporary name.
//
// The order is what makes this safe. A temporary is named in the record,
// durably (one fsync of the record serves every creation waiting for it:
// see before), and only then created, O_EXCL, so that nothing of anyone
// else's was in its place; its inode number and type are added once it
// exists, and a creation that failed drops the name again (durably when
// the name was found taken). A power cut thus never leaves a leftover the
// record does not name, and a name the record holds that the next run
// finds holding something else (read when the run starts: a name no
// longer there, or holding another type or inode) is dropped from the
// record; so is a recorded name that the run is about to copy a source
// file to, durably (fsync)
// before that copy is placed. The run holds the destination's lock
// (destlock.Lock), so no other run writes the record meanwhile. When the run
// ends, the record keeps only what is still there (a temporary kept for
// the next run to take up, a staged directory that could not be put in
// place), and is removed when that is nothing.
//
// A run into a directory below the root reads only its own root's record:
// a leftover of a run into the parent is left alone there (and reported),
// and removed by the next run into the root that made it. --no-cache
// changes nothing here: the record is not part of the hash cache.
//
// The record's own name is reserved in the destination root: a source
// file that would be copied onto it fails (errMadeName) and, under --move,
// is kept.

// madeName is the record's name in the destination root.
const madeName = ".fastcopy-made"

// madeMagic is the record's first line: a file of that name that does not
// start with it is not a record of fastcopy's, and is never written to.
const madeMagic = "fastcopy-made 1\n"

// dropNested removes the record of an earlier run into dirRel, a
// directory below this run's root, found in its listing names: this run
// writes in that tree without keeping that record true (a source file it
// copies onto a name the record holds would be taken, by the next run into
// dirRel, for that run's leftover and removed). Its proof that the file is
// such a record: a regular file with one link that starts with the
// record's first line (a source entry of that name is never copied:
// errMadeName). The leftovers it named are left alone from then on, and
// reported (leave-temp), never removed.
func (m *madeRecord) dropNested(dd *fileio.Dir, dirRel string, names []fileio.DirEntry) {
	if m == nil || m.root == nil {
		return
	}
	found := false
	for _, n := range names {
		if n.Name == madeName {
			found = true
			break
		}
	}
	if !found {
		return
	}
	st, err := dd.Lstat(madeName)
	if err != nil || !st.IsRegular() || st.Nlink != 1 {
		return
	}
	f, err := dd.Open(madeName, false)
	if err != nil {
		return
	}
	head := make([]byte, len(madeMagic))
	n, _ := f.ReadAt(head, 0)
	fst, serr := f.Stat()
	f.Close() // before its name goes: FUSE hides a file removed while open
	if n != len(head) || string(head) != madeMagic || serr != nil || fst.Ino != st.Ino || fst.Dev != st.Dev {
		return
	}
	rel := joinRel(dirRel, madeName)
	if m.e.opt.DryRun {
		m.e.event(ActCleanTmp, rel)
		return
	}
	if cur, err := dd.Lstat(madeName); err == nil && cur.Ino == st.Ino && cur.Dev == st.Dev && dd.Remove(madeName) == nil {
		m.e.event(ActCleanTmp, rel)
	}
}

// errMadeName is the failure of a source file that would be copied onto
// the record in the destination root.
var errMadeName = fmt.Errorf("not copied: %q is the name of fastcopy's record of the temporaries a run makes in its destination; rename the source file or exclude it", madeName)

// madeEntry is one entry the record names: a directory (a stage) or not.
type madeEntry struct {
	dir  bool
	ino  uint64 // 0: not known (its line was lost, or it is not made yet)
	kind byte   // its type once made (kindOf), 0 when not known
	// pending: this run is about to create it (intend), and has not: never
	// taken for anything's own until it is made. off is the end of its
	// line in the record, durable before the entry is created.
	pending bool
	off     int64
}

// madeRecord is the run's record of what it and earlier runs made in the
// destination root (see above).
type madeRecord struct {
	e         *engine
	mu        sync.Mutex
	root      *fileio.Dir // nil: nothing is recorded, nothing taken for a leftover
	f         *fileio.File
	id        devIno // f's, to remove the record only when its name still leads to it
	off       int64  // where the next line is written
	foreign   bool   // madeName holds something that is not a record: left alone
	stableIno bool   // the filesystem keeps inode numbers: they are checked
	open      map[string]madeEntry

	// The record is flushed by one goroutine (flusher), so that many
	// intents share one fsync: durable is how much of it is on the disk.
	cond      *sync.Cond
	durable   int64
	flushing  bool // the flusher runs
	closing   bool
	dirSynced bool // the root, holding the record's name, was flushed once
}

// stableInoFS are the filesystems whose inode numbers stay an entry's
// from one mount to the next. FAT, exFAT and FUSE drivers number inodes
// as they meet them.
var stableInoFS = map[string]bool{"ext4": true, "xfs": true, "btrfs": true, "tmpfs": true, "ramfs": true, "f2fs": true, "zfs": true, "bcachefs": true}

// load reads the record of the destination root d, drops what no longer
// holds what it names, and writes that back (durably) before the run
// writes anything else. A dry run reads it and writes nothing.
func (m *madeRecord) load(d *fileio.Dir, path string, dry bool) {
	m.cond = sync.NewCond(&m.mu)
	m.root = d.Unfaulted() // the record's calls are not the copy's: no injected fault counts them
	d = m.root
	m.open = map[string]madeEntry{}
	fsType, _ := fileio.FSType(path)
	m.stableIno = stableInoFS[fsType]
	var f *fileio.File
	var err error
	if dry {
		f, err = d.Open(madeName, false)
	} else {
		f, err = d.OpenTemp(madeName)
	}
	if err != nil {
		if !fileio.IsNotExist(err) {
			m.foreign = true // a symlink, a directory, unreadable: not ours
		}
		return
	}
	st, err := f.Stat()
	if err != nil || !st.IsRegular() || st.Nlink != 1 || int(st.Uid) != m.e.euid || st.Size > 64<<20 {
		f.Close()
		m.foreign = true
		return
	}
	data := make([]byte, st.Size)
	if n, err := f.ReadFull(data, 0); err != nil || int64(n) != st.Size {
		f.Close()
		m.foreign = true
		return
	}
	if len(data) < len(madeMagic) && strings.HasPrefix(madeMagic, string(data)) {
		data = []byte(madeMagic) // cut short by a crash as it was rewritten: names nothing
	} else if !bytes.HasPrefix(data, []byte(madeMagic)) {
		f.Close()
		m.foreign = true
		return
	}
	parsed, torn := 0, false
	sc := bufio.NewScanner(bytes.NewReader(data[len(madeMagic):]))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		rel, en, add, ok := parseMade(sc.Text())
		if !ok {
			torn = true // a torn last line: what follows is not known
			break
		}
		parsed++
		if add && strings.HasPrefix(sc.Text(), "= ") {
			if cur, ok := m.open[rel]; ok {
				cur.ino, cur.kind = en.ino, en.kind
				m.open[rel] = cur
			}
		} else if add {
			m.open[rel] = en
		} else {
			delete(m.open, rel)
		}
	}
	for rel, en := range m.open {
		if !m.holds(rel, en) {
			delete(m.open, rel)
		}
	}
	if dry {
		f.Close()
		return
	}
	m.f, m.id = f, devIno{st.Dev, st.Ino}
	m.off, m.durable, m.dirSynced = st.Size, st.Size, true
	if torn || parsed != len(m.open) || st.Size < int64(len(madeMagic)) {
		m.rewrite(true)
	}
}

// parseMade reads one line of the record: "+ d|f INO PATH" (made) or
// "- PATH" (no longer the run's), PATH quoted.
func parseMade(line string) (rel string, en madeEntry, add, ok bool) {
	switch {
	case strings.HasPrefix(line, "- "):
		rel, err := strconv.Unquote(line[2:])
		return rel, madeEntry{}, false, err == nil
	case strings.HasPrefix(line, "= "):
		parts := strings.SplitN(line[2:], " ", 3)
		if len(parts) != 3 || len(parts[1]) != 1 {
			return "", en, false, false
		}
		ino, err := strconv.ParseUint(parts[0], 10, 64)
		rel, uerr := strconv.Unquote(parts[2])
		return rel, madeEntry{ino: ino, kind: parts[1][0]}, true, err == nil && uerr == nil && ino != 0
	case strings.HasPrefix(line, "+ "):
		parts := strings.SplitN(line[2:], " ", 3)
		if len(parts) != 3 || (parts[0] != "d" && parts[0] != "f") {
			return "", en, false, false
		}
		ino, err := strconv.ParseUint(parts[1], 10, 64)
		if err != nil {
			return "", en, false, false
		}
		rel, err := strconv.Unquote(parts[2])
		if err != nil || rel == "" {
			return "", en, false, false
		}
		return rel, madeEntry{dir: parts[0] == "d", ino: ino}, true, true
	}
	return "", en, false, false
}

func madeLine(rel string, en madeEntry) string {
	kind := "f"
	if en.dir {
		kind = "d"
	}
	line := "+ " + kind + " 0 " + strconv.Quote(rel) + "\n"
	if en.ino != 0 {
		line += identLine(rel, en.ino, en.kind)
	}
	return line
}

// identLine is the line that gives a made entry's inode number and type.
func identLine(rel string, ino uint64, kind byte) string {
	return "= " + strconv.FormatUint(ino, 10) + " " + string(kind) + " " + strconv.Quote(rel) + "\n"
}

// kindOf is the type letter of st in the record: a directory, a regular
// file, a symlink, anything else.
func kindOf(st *fileio.Stat) byte {
	switch {
	case st.IsDir():
		return 'd'
	case st.IsRegular():
		return 'f'
	case st.IsSymlink():
		return 'l'
	}
	return 'o'
}

// holds reports whether rel, below the root, is what en names.
func (m *madeRecord) holds(rel string, en madeEntry) bool {
	dir, name := splitRel(rel)
	d := m.root
	if dir != "" {
		var err error
		if d, err = m.root.OpenBeneath(dir); err != nil {
			return false
		}
		defer d.Close()
	}
	st, err := d.Lstat(name)
	return err == nil && m.matches(en, &st)
}

func (m *madeRecord) matches(en madeEntry, st *fileio.Stat) bool {
	return !en.pending && en.dir == st.IsDir() && (en.kind == 0 || en.kind == kindOf(st)) && (!m.stableIno || en.ino == 0 || en.ino == st.Ino)
}

// before is called right before this run creates name (a temporary file
// or a staged directory) in the destination directory dirRel: the record
// names it, durably, before it exists. Many share one fsync: the walker
// records a directory's temporaries as it sends its files (intend), and
// the creation waits only for what is not on the disk yet.
func (m *madeRecord) before(dirRel, name string, dir bool) {
	m.settle(m.intend(dirRel, name, dir))
}

// intend records that this run is about to create name in dirRel, and
// returns where its line ends (0: nothing to wait for).
func (m *madeRecord) intend(dirRel, name string, dir bool) int64 {
	if m == nil || m.root == nil || m.foreign || m.e.opt.DryRun {
		return 0
	}
	rel := joinRel(dirRel, name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if en, ok := m.open[rel]; ok {
		if en.pending {
			return en.off
		}
		return 0 // an earlier run's, recorded already (a kept temporary)
	}
	if !m.openLocked() {
		return 0
	}
	en := madeEntry{dir: dir, pending: true}
	if !m.write(madeLine(rel, en)) {
		return 0
	}
	en.off = m.off
	m.open[rel] = en
	m.cond.Broadcast()
	return en.off
}

// openLocked creates the record when there is none yet (mu held), and
// starts its flusher.
func (m *madeRecord) openLocked() bool {
	if m.f == nil {
		if m.foreign {
			return false
		}
		f, err := m.root.CreateTemp(madeName)
		if err != nil {
			m.foreign = fileio.IsExist(err) // made meanwhile by someone else
			return false
		}
		fst, err := f.Stat()
		if err != nil || f.WriteAt([]byte(madeMagic), 0) != nil {
			f.Close()
			m.foreign = true
			return false
		}
		m.f, m.id, m.off, m.durable = f, devIno{fst.Dev, fst.Ino}, int64(len(madeMagic)), 0
	}
	if !m.flushing && !m.closing {
		m.flushing = true
		go m.flusher()
	}
	return true
}

// flusher makes the record durable whenever something was written to it,
// and the root's entry for it once; it stops when the run finishes.
func (m *madeRecord) flusher() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for {
		for m.durable >= m.off && !m.closing {
			m.cond.Wait()
		}
		if m.closing {
			break
		}
		target, f, syncDir := m.off, m.f, !m.dirSynced
		m.mu.Unlock()
		_ = f.Sync()
		if syncDir {
			_ = m.root.AsFile().Sync()
		}
		m.mu.Lock()
		m.durable, m.dirSynced = target, true
		m.cond.Broadcast()
	}
	m.flushing = false
	m.cond.Broadcast()
}

// settle waits until the record is durable up to off.
func (m *madeRecord) settle(off int64) {
	if m == nil || off == 0 {
		return
	}
	m.mu.Lock()
	for m.durable < off && m.flushing {
		m.cond.Wait()
	}
	m.mu.Unlock()
}

// after is called once the creation that before announced is done (err
// its failure): the record gets the entry's inode number, or drops it.
// A failure that found the name taken drops it durably: the record must
// never name what someone else put there.
func (m *madeRecord) after(dd *fileio.Dir, dirRel, name string, st *fileio.Stat, err error) {
	if m == nil || m.root == nil || m.e.opt.DryRun {
		return
	}
	rel := joinRel(dirRel, name)
	if err != nil {
		m.mu.Lock()
		en, ok := m.open[rel]
		if !ok || !en.pending {
			m.mu.Unlock()
			return
		}
		delete(m.open, rel)
		m.write("- " + strconv.Quote(rel) + "\n")
		off := m.off
		m.cond.Broadcast()
		m.mu.Unlock()
		if fileio.IsExist(err) {
			m.settle(off)
		}
		return
	}
	m.made(dd, dirRel, name, st)
}

// made records name in dd (the destination directory dirRel, by its own
// path below the root), just created by this run (O_EXCL, mkdir, a new
// link), as its own, with its inode number: st is what was created, as
// its descriptor sees it, or nil to look it up by name. One that before
// did not announce is recorded now, not durably: a crash can lose it, and
// then it is left alone.
func (m *madeRecord) made(dd *fileio.Dir, dirRel, name string, st *fileio.Stat) {
	if m == nil || m.root == nil || m.foreign || m.e.opt.DryRun {
		return
	}
	if st == nil {
		cur, err := dd.Lstat(name)
		if err != nil {
			return
		}
		st = &cur
	}
	rel := joinRel(dirRel, name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.openLocked() {
		return
	}
	en, ok := m.open[rel]
	if !ok || en.dir != st.IsDir() {
		en = madeEntry{dir: st.IsDir()}
		if !m.write(madeLine(rel, en)) {
			return
		}
	}
	en.pending, en.ino, en.kind = false, st.Ino, kindOf(st)
	if m.write(identLine(rel, st.Ino, en.kind)) {
		m.open[rel] = en
		m.cond.Broadcast()
	}
}

// write appends line to the record (mu held).
func (m *madeRecord) write(line string) bool {
	if err := m.f.WriteAt([]byte(line), m.off); err != nil {
		return false
	}
	m.off += int64(len(line))
	return true
}

// ours reports whether name in the destination directory dirRel (lstat
// st) is an entry the record names as made by a run, with st's type and
// (where known) inode: proof that it may be removed, resumed or left out
// of --delete as a leftover.
func (m *madeRecord) ours(dirRel, name string, st *fileio.Stat) bool {
	return m.oursRel(joinRel(dirRel, name), st)
}

// oursByName is ours for the entry name in dd (at dirRel) as it is now.
func (m *madeRecord) oursByName(dd *fileio.Dir, dirRel, name string) bool {
	if m == nil || m.root == nil || dd == nil {
		return false
	}
	st, err := dd.Lstat(name)
	return err == nil && m.ours(dirRel, name, &st)
}

// oursRel is ours for the path rel below the root.
func (m *madeRecord) oursRel(rel string, st *fileio.Stat) bool {
	if m == nil || m.root == nil {
		return false
	}
	m.mu.Lock()
	en, ok := m.open[rel]
	m.mu.Unlock()
	return ok && m.matches(en, st)
}

// recorded reports whether the record names rel at all.
func (m *madeRecord) recorded(rel string) bool {
	if m == nil || m.root == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.open[rel]
	return ok
}

// disown drops the paths rels from the record, durably, before the run
// copies source files onto them: what is placed there is the user's.
func (m *madeRecord) disown(rels []string) {
	if m == nil || m.root == nil || len(rels) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, rel := range rels {
		delete(m.open, rel)
		if m.f != nil {
			m.write("- " + strconv.Quote(rel) + "\n")
		}
	}
	if m.f != nil && !m.e.opt.DryRun {
		_ = m.f.Sync()
	}
}

// gone drops rel from the record: the run removed it, or renamed it
// onto its own name. Nothing is written: the name no longer holds what
// the record names, which the next run sees.
func (m *madeRecord) gone(rel string) {
	if m == nil || m.root == nil {
		return
	}
	m.mu.Lock()
	delete(m.open, rel)
	m.mu.Unlock()
}

// finish keeps in the record what is still there, or removes it when
// that is nothing, and closes it. sync makes the rewrite durable.
func (m *madeRecord) finish() {
	if m == nil || m.root == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closing = true
	m.cond.Broadcast()
	for m.flushing {
		m.cond.Wait()
	}
	if m.f == nil {
		return
	}
	for rel, en := range m.open {
		if en.pending || !m.holds(rel, en) {
			delete(m.open, rel)
		}
	}
	// The record's removal is made durable (the root's fsync, after its
	// times are put back), unless the run was asked not to flush: a power
	// cut after exit 0 must not bring back a record of leftovers that are
	// gone, which verify would then count as an extra file.
	removed := false
	defer func() {
		if removed && !m.e.opt.NoSync {
			_ = m.root.AsFile().Sync()
		}
	}()
	// The root got its metadata already (applyDirMeta): the record's
	// removal leaves its times as they are.
	defer keepDirTimes(m.root)()
	if len(m.open) == 0 {
		// Closed first: a FUSE driver hides a file removed while open
		// (.fuse_hidden) instead of removing it.
		m.f.Close()
		m.f = nil
		if st, err := m.root.Lstat(madeName); err == nil && (devIno{st.Dev, st.Ino}) == m.id {
			removed = m.root.Remove(madeName) == nil
		}
		return
	}
	m.rewrite(true)
	m.f.Close()
	m.f = nil
}

// rewrite writes the record anew with what is open (mu held, or before
// the run starts). The rewrite goes through the descriptor, never the
// name, which a source file of that name may have taken meanwhile. A
// crash in the middle loses records, which leaves leftovers alone.
func (m *madeRecord) rewrite(sync bool) {
	var b strings.Builder
	b.WriteString(madeMagic)
	for rel, en := range m.open {
		b.WriteString(madeLine(rel, en))
	}
	if err := m.f.Truncate(0); err != nil {
		return
	}
	if err := m.f.WriteAt([]byte(b.String()), 0); err != nil {
		m.off = 0
		return
	}
	m.off = int64(b.Len())
	if sync {
		_ = m.f.Sync()
	}
}
