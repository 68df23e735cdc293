package made

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/fastcopy/fastcopy/internal/destfs"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// Config is the record's whole input.
type Config struct {
	// Root is the destination root, opened and locked by the run; Path
	// is its path, by which its filesystem is known.
	Root *fileio.Dir
	Path string
	// NoSync leaves the record's removal at the end of the run
	// unflushed.
	NoSync bool
	// SkipWrite is the dry run's gate (the engine's one): the record is
	// read and nothing written; nil: the run writes.
	SkipWrite func() bool
	// UID is the run's effective user: a record owned by another is not
	// the run's, and is left alone.
	UID int
	// Cleaned is told of the record of an earlier run into a directory
	// below the root removed (or that a dry run would remove), by its path
	// below the root; may be nil.
	Cleaned func(rel string)
	// KeepDirTimes returns a function that puts d's times back as they
	// are when it is called; may be nil.
	KeepDirTimes func(d *fileio.Dir) func()
}

// dry reports whether this is a dry run (SkipWrite).
func (c *Config) dry() bool { return c.SkipWrite != nil && c.SkipWrite() }

func (m *Record) cleaned(rel string) {
	if m.cfg.Cleaned != nil {
		m.cfg.Cleaned(rel)
	}
}

// devIno is an inode's identity.
type devIno struct{ dev, ino uint64 }

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

func splitRel(rel string) (dir, name string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "", rel
	}
	return rel[:i], rel[i+1:]
}

// Name is the record's name in the destination root.
const Name = ".fastcopy-made"

// magic is the record's first line: a file of that name that does not
// start with it is not a record of fastcopy's, and is never written to.
const magic = "fastcopy-made 1\n"

// DropNested removes the record of an earlier run into dirRel, a
// directory below this run's root, found in its listing names: this run
// writes in that tree without keeping that record true (a source file it
// copies onto a name the record holds would be taken, by the next run into
// dirRel, for that run's leftover and removed). Its proof that the file is
// such a record: a regular file with one link that starts with the
// record's first line (a source entry of that name is never copied:
// ErrName). The leftovers it named are left alone from then on, and
// reported (leave-temp), never removed.
func (m *Record) DropNested(dd *fileio.Dir, dirRel string, names []fileio.DirEntry) {
	if m == nil || m.root == nil {
		return
	}
	found := false
	for _, n := range names {
		if n.Name == Name {
			found = true
			break
		}
	}
	if !found {
		return
	}
	st, err := dd.Lstat(Name)
	if err != nil || !st.IsRegular() || st.Nlink != 1 {
		return
	}
	f, err := dd.Open(Name, false)
	if err != nil {
		return
	}
	head := make([]byte, len(magic))
	n, _ := f.ReadAt(head, 0)
	fst, serr := f.Stat()
	f.Close() // before its name goes: FUSE hides a file removed while open
	if n != len(head) || string(head) != magic || serr != nil || fst.Ino != st.Ino || fst.Dev != st.Dev {
		return
	}
	rel := joinRel(dirRel, Name)
	if m.cfg.dry() {
		m.cleaned(rel)
		return
	}
	if cur, err := dd.Lstat(Name); err == nil && cur.Ino == st.Ino && cur.Dev == st.Dev && dd.Remove(Name) == nil {
		m.cleaned(rel)
	}
}

// ErrName is the failure of a source file that would be copied onto
// the record in the destination root.
var ErrName = fmt.Errorf("not copied: %q is the name of fastcopy's record of the temporaries a run makes in its destination; rename the source file or exclude it", Name)

// entry is one entry the record names: a directory (a stage) or not.
type entry struct {
	dir  bool
	ino  uint64 // 0: not known (its line was lost, or it is not made yet)
	kind byte   // its type once made (kindOf), 0 when not known
	// pending: this run is about to create it (Intend), and has not: never
	// taken for anything's own until it is made. off is the end of its
	// line in the record, durable before the entry is created.
	pending bool
	off     int64
}

// Record is the run's record of what it and earlier runs made in the
// destination root (the package doc).
type Record struct {
	cfg       Config
	mu        sync.Mutex
	root      *fileio.Dir // nil: nothing is recorded, nothing taken for a leftover
	f         *fileio.File
	id        devIno // f's, to remove the record only when its name still leads to it
	off       int64  // where the next line is written
	foreign   bool   // Name holds something that is not a record: left alone
	stableIno bool   // the filesystem keeps inode numbers: they are checked
	open      map[string]entry

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

// Load reads the record of the destination root cfg.Root, drops what no
// longer holds what it names, and writes that back (durably) before the
// run writes anything else. A dry run reads it and writes nothing. The
// Record it returns holds the record open until Finish.
func Load(cfg Config) *Record {
	m := &Record{cfg: cfg}
	m.load(cfg.Root, cfg.Path, cfg.dry())
	return m
}

func (m *Record) load(d *fileio.Dir, path string, dry bool) {
	m.cond = sync.NewCond(&m.mu)
	m.root = d.Unfaulted() // the record's calls are not the copy's: no injected fault counts them
	d = m.root
	m.open = map[string]entry{}
	fsType, _ := fileio.FSType(path)
	m.stableIno = stableInoFS[fsType]
	var f *fileio.File
	var err error
	if dry {
		f, err = d.Open(Name, false)
	} else {
		f, err = fileio.OpenTemp(d, Name)
	}
	if err != nil {
		if !fileio.IsNotExist(err) {
			m.foreign = true // a symlink, a directory, unreadable: not ours
		}
		return
	}
	st, err := f.Stat()
	if err != nil || !st.IsRegular() || st.Nlink != 1 || !fileio.OwnedBy(&st, m.cfg.UID) || st.Size > 64<<20 {
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
	if len(data) < len(magic) && strings.HasPrefix(magic, string(data)) {
		data = []byte(magic) // cut short by a crash as it was rewritten: names nothing
	} else if !bytes.HasPrefix(data, []byte(magic)) {
		f.Close()
		m.foreign = true
		return
	}
	parsed, torn := 0, false
	sc := bufio.NewScanner(bytes.NewReader(data[len(magic):]))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		rel, en, add, ok := parseLine(sc.Text())
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
	if torn || parsed != len(m.open) || st.Size < int64(len(magic)) {
		m.rewrite(true)
	}
}

// parseLine reads one line of the record: "+ d|f INO PATH" (made) or
// "- PATH" (no longer the run's), PATH quoted.
func parseLine(line string) (rel string, en entry, add, ok bool) {
	switch {
	case strings.HasPrefix(line, "- "):
		rel, err := strconv.Unquote(line[2:])
		return rel, entry{}, false, err == nil
	case strings.HasPrefix(line, "= "):
		parts := strings.SplitN(line[2:], " ", 3)
		if len(parts) != 3 || len(parts[1]) != 1 {
			return "", en, false, false
		}
		ino, err := strconv.ParseUint(parts[0], 10, 64)
		rel, uerr := strconv.Unquote(parts[2])
		return rel, entry{ino: ino, kind: parts[1][0]}, true, err == nil && uerr == nil && ino != 0
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
		return rel, entry{dir: parts[0] == "d", ino: ino}, true, true
	}
	return "", en, false, false
}

func entryLine(rel string, en entry) string {
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
func (m *Record) holds(rel string, en entry) bool {
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

func (m *Record) matches(en entry, st *fileio.Stat) bool {
	return !en.pending && en.dir == st.IsDir() && (en.kind == 0 || en.kind == kindOf(st)) && (!m.stableIno || en.ino == 0 || en.ino == st.Ino)
}

// Before is called right before this run creates name (a temporary file
// or a staged directory) in the destination directory dirRel: the record
// names it, durably, before it exists. Many share one fsync: the walker
// records a directory's temporaries as it sends its files (Intend), and
// the creation waits only for what is not on the disk yet.
func (m *Record) Before(dirRel, name string, dir bool) {
	m.settle(m.Intend(dirRel, name, dir))
}

// Intend records that this run is about to create name in dirRel, and
// returns where its line ends (0: nothing to wait for).
func (m *Record) Intend(dirRel, name string, dir bool) int64 {
	if m == nil || m.root == nil || m.foreign || m.cfg.dry() {
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
	en := entry{dir: dir, pending: true}
	if !m.write(entryLine(rel, en)) {
		return 0
	}
	en.off = m.off
	m.open[rel] = en
	m.cond.Broadcast()
	return en.off
}

// openLocked creates the record when there is none yet (mu held), and
// starts its flusher.
func (m *Record) openLocked() bool {
	if m.f == nil {
		if m.foreign {
			return false
		}
		f, err := fileio.CreateTemp(m.root, Name)
		if err != nil {
			m.foreign = fileio.IsExist(err) // made meanwhile by someone else
			return false
		}
		fst, err := f.Stat()
		if err != nil || f.WriteAt([]byte(magic), 0) != nil {
			f.Close()
			m.foreign = true
			return false
		}
		m.f, m.id, m.off, m.durable = f, devIno{fst.Dev, fst.Ino}, int64(len(magic)), 0
	}
	if !m.flushing && !m.closing {
		m.flushing = true
		go m.flusher()
	}
	return true
}

// flusher makes the record durable whenever something was written to it,
// and the root's entry for it once; it stops when the run finishes.
func (m *Record) flusher() {
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
func (m *Record) settle(off int64) {
	if m == nil || off == 0 {
		return
	}
	m.mu.Lock()
	for m.durable < off && m.flushing {
		m.cond.Wait()
	}
	m.mu.Unlock()
}

// After is called once the creation that Before announced is done (err
// its failure): the record gets the entry's inode number, or drops it.
// A failure that found the name taken drops it durably: the record must
// never name what someone else put there.
func (m *Record) After(dd *fileio.Dir, dirRel, name string, st *fileio.Stat, err error) {
	if m == nil || m.root == nil || m.cfg.dry() {
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
	m.Made(dd, dirRel, name, st)
}

// Made records name in dd (the destination directory dirRel, by its own
// path below the root), just created by this run (O_EXCL, mkdir, a new
// link), as its own, with its inode number: st is what was created, as
// its descriptor sees it, or nil to look it up by name. One that before
// did not announce is recorded now, not durably: a crash can lose it, and
// then it is left alone.
func (m *Record) Made(dd *fileio.Dir, dirRel, name string, st *fileio.Stat) {
	if m == nil || m.root == nil || m.foreign || m.cfg.dry() {
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
		en = entry{dir: st.IsDir()}
		if !m.write(entryLine(rel, en)) {
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
func (m *Record) write(line string) bool {
	if err := m.f.WriteAt([]byte(line), m.off); err != nil {
		return false
	}
	m.off += int64(len(line))
	return true
}

// Ours reports whether name in the destination directory dirRel (lstat
// st) is an entry the record names as made by a run, with st's type and
// (where known) inode: proof that it may be removed, resumed or left out
// of --delete as a leftover.
func (m *Record) Ours(dirRel, name string, st *fileio.Stat) bool {
	return m.oursRel(joinRel(dirRel, name), st)
}

// OursByName is Ours for the entry name in dd (at dirRel) as it is now.
func (m *Record) OursByName(dd *fileio.Dir, dirRel, name string) bool {
	if m == nil || m.root == nil || dd == nil {
		return false
	}
	st, err := dd.Lstat(name)
	return err == nil && m.Ours(dirRel, name, &st)
}

// oursRel is Ours for the path rel below the root.
func (m *Record) oursRel(rel string, st *fileio.Stat) bool {
	if m == nil || m.root == nil {
		return false
	}
	m.mu.Lock()
	en, ok := m.open[rel]
	m.mu.Unlock()
	return ok && m.matches(en, st)
}

// Recorded reports whether the record names rel at all.
func (m *Record) Recorded(rel string) bool {
	if m == nil || m.root == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.open[rel]
	return ok
}

// Disown drops the paths rels from the record, durably, before the run
// copies source files onto them: what is placed there is the user's.
func (m *Record) Disown(rels []string) {
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
	if m.f != nil && !m.cfg.dry() {
		_ = m.f.Sync()
	}
}

// Gone drops rel from the record: the run removed it, or renamed it
// onto its own name. Nothing is written: the name no longer holds what
// the record names, which the next run sees.
func (m *Record) Gone(rel string) {
	if m == nil || m.root == nil {
		return
	}
	m.mu.Lock()
	delete(m.open, rel)
	m.mu.Unlock()
}

// Finish keeps in the record what is still there, or removes it when
// that is nothing, and closes it.
func (m *Record) Finish() {
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
		if removed && !m.cfg.NoSync {
			_ = m.root.AsFile().Sync()
		}
	}()
	// The root got its metadata already (copyengine's applyDirMeta): the record's
	// removal leaves its times as they are.
	if m.cfg.KeepDirTimes != nil {
		defer m.cfg.KeepDirTimes(m.root)()
	}
	if len(m.open) == 0 {
		// Closed first: a FUSE driver hides a file removed while open
		// (.fuse_hidden) instead of removing it.
		m.f.Close()
		m.f = nil
		if st, err := m.root.Lstat(Name); err == nil && (devIno{st.Dev, st.Ino}) == m.id {
			removed = m.root.Remove(Name) == nil
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
func (m *Record) rewrite(sync bool) {
	var b strings.Builder
	b.WriteString(magic)
	for rel, en := range m.open {
		b.WriteString(entryLine(rel, en))
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

// Foreign reports whether the record's name in the root holds something
// that is not a record of fastcopy's: it is then left alone, and --delete
// treats it as any other entry.
func (m *Record) Foreign() bool {
	return m != nil && m.foreign
}

// Leftover reports whether name in dd (the destination directory dirRel),
// which an exclusive create found taken, is a leftover of fastcopy's own
// that may be removed: a temporary's name (destfs.IsTempName) that the
// record names, an entry of type want (0: anything but a directory),
// listed under exactly that spelling, not another entry whose name folds
// to it (a source file ".A.fastcopy-tmp" copied beside the temporary
// ".a.fastcopy-tmp" of a file "a" on exFAT). The listing is read whether
// or not dd is known to fold (a probe can fail), at the cost of one
// listing per such create, which only an interrupted run's leftovers
// cause. Anything else stays, and the create's failure is the entry's
// (Taken).
func (m *Record) Leftover(dd *fileio.Dir, dirRel, name string, want uint32) bool {
	if !destfs.IsTempName(name) {
		return false
	}
	st, err := dd.Lstat(name)
	if err != nil || (want != 0 && st.Type() != want) || (want == 0 && st.IsDir()) {
		return false
	}
	if !m.Ours(dirRel, name, &st) {
		return false // named like one, but no record shows a run made it
	}
	names, err := dd.ReadDir()
	if err != nil {
		return false
	}
	for _, n := range names {
		if n.Name == name {
			return true
		}
	}
	return false
}

// Taken is the failure of a create whose name another entry holds, one
// that is not a Leftover.
func Taken(name string, err error) error {
	return fmt.Errorf("%q is taken by an entry that is not a leftover of fastcopy's; it was left alone: %w", name, err)
}

// Clear removes name from dd (the destination directory dirRel) before it
// is created, when it is a Leftover, and drops it from the record. Where
// nothing answers to the name (the usual case) it costs one lookup.
func (m *Record) Clear(dd *fileio.Dir, dirRel, name string) {
	if _, err := dd.Lstat(name); err == nil && m.Leftover(dd, dirRel, name, 0) {
		if dd.Remove(name) == nil {
			m.Gone(joinRel(dirRel, name))
		}
	}
}

// Own reports whether name in dir (the destination directory dstRel) is
// fastcopy's own, which --delete leaves to the walk: a temporary or
// staged directory that the record names (Ours), which the walk removes or
// takes up, or the record itself (in the root, unless Foreign). Anything
// else named like a temporary is an entry the source lacks, like any
// other.
func (m *Record) Own(dir *fileio.Dir, dstRel, name string) bool {
	if dstRel == "" && name == Name && !m.Foreign() {
		return true
	}
	return destfs.IsTempName(name) && m.OursByName(dir, dstRel, name)
}
