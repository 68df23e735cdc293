package copyengine

import (
	"github.com/fastcopy/fastcopy/internal/backupdir"
	"github.com/fastcopy/fastcopy/internal/destfs"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/preflight"
)

// backups is the engine's side of --backup-dir (internal/backupdir): it
// builds the package's Config from the options and the plan, and counts
// and reports what it kept.
type backups struct {
	e *engine
	d *backupdir.Dir // checked by check; nil before, or without --backup-dir
}

func (b *backups) on() bool { return b.e.opt.BackupDir != "" }

// check refuses a backup directory that overlaps DEST or a source, and
// makes and opens it (not in a dry run): backupdir.Open.
func (b *backups) check(p *plan) error {
	e := b.e
	if !b.on() {
		return nil
	}
	cfg := backupdir.Config{
		Arg:       e.opt.BackupDir,
		Dest:      p.dstRoot,
		Resolve:   preflight.ArgPath,
		Inside:    preflight.Inside,
		SkipWrite: e.skipWrite,
		CheckInode: func() bool {
			return e.dstSide.Policy.CheckInode
		},
		TempName: func(target string, taken func(string) bool) string {
			if tmp := destfs.TempName(target); !taken(tmp) {
				return tmp
			}
			return destfs.FreeTempName(target, taken)
		},
		Buffer:    e.buf,
		Release:   e.putBuf,
		ModesLost: func(err error) bool { return e.fs.info.CannotKeep(lostModes, err) },
		Kept:      b.kept,
	}
	for _, r := range p.roots {
		if r.isDir {
			cfg.Sources = append(cfg.Sources, backupdir.Source{Arg: r.src, Dir: r.srcDir})
		}
	}
	d, err := backupdir.Open(cfg)
	if err != nil {
		return err
	}
	b.d = d
	return nil
}

func (b *backups) close() { b.d.Close() }

// kept counts and reports the old version of rel kept in the backup
// directory, and its removal from DEST when removed is set (in a dry run,
// what preserve would do).
func (b *backups) kept(rel string, removed bool) {
	e := b.e
	if removed {
		e.deleted(rel)
	}
	e.count(func(s *Summary) { s.BackedUp++ })
	e.event(ActBackup, rel)
}

// beforeReplace keeps the file a copy is about to replace (name in dir),
// right before the publishing rename (backupdir.Dir.BeforeReplace).
func (b *backups) beforeReplace(dir *fileio.Dir, name, rel string) error {
	if !b.on() {
		return nil
	}
	return b.d.BeforeReplace(dir, name, rel)
}

// keepReplaced keeps, with --backup-dir, what a symlink or special file of
// the source is about to replace in DEST. It holds no data to verify, so
// the old entry is kept before the new one is made.
func (cp *copier) keepReplaced(c *chunk, en *entry, rel string) error {
	e := cp.e
	if en.dstSt == nil || c.dst == nil || e.skipWrite() || !e.backups.on() {
		return nil
	}
	return e.backups.beforeReplace(c.dst.d, en.dstName, rel)
}
