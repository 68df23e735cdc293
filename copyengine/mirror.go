package copyengine

import (
	"errors"
	"fmt"

	"github.com/fastcopy/fastcopy/internal/backupdir"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/linkdest"
	"github.com/fastcopy/fastcopy/internal/made"
	"github.com/fastcopy/fastcopy/internal/mirror"
	"github.com/fastcopy/fastcopy/internal/move"
	"github.com/fastcopy/fastcopy/internal/preflight"
	"github.com/fastcopy/fastcopy/internal/records"
)

// ErrMaxDelete is returned by Run when --delete would remove more entries
// than Options.MaxDelete allows: nothing was deleted (the copy itself is
// done and durable). It is wrapped in a *MaxDeleteError.
var ErrMaxDelete = mirror.ErrMaxDelete

// MaxDeleteError says how many entries --delete would have removed and the
// bound it exceeded.
type MaxDeleteError = mirror.MaxDeleteError

// mirrorStage is the engine's side of --delete (internal/mirror, where
// its policy is): it builds the pass's Config from the options and the
// plan, hands it each directory the walk listed in full, runs it after
// the final flush, and counts and reports what it did. It is the pass's
// Proof and Report.
type mirrorStage struct {
	e    *engine
	pass *mirror.Pass // made by guard; nil without --delete
}

// guard refuses --delete, before anything is written, where the mirror
// looks like a mistake (mirror.Pass.Guard), then checks --backup-dir.
func (m *mirrorStage) guard(p *plan) error {
	e := m.e
	if !e.opt.Delete {
		return e.backups.check(p)
	}
	cfg := mirror.Config{
		Dest:      p.dstRoot,
		Create:    p.create,
		Force:     e.opt.DeleteForce,
		MaxDelete: e.opt.MaxDelete,
		AsRoot:    e.root,
		MadeName:  made.Name,
		Inside:    preflight.Inside,
		Proof:     m,
		Report:    m,
		SkipWrite: e.skipWrite,
	}
	if e.cache != nil {
		cfg.Notes = e.cache
	}
	if e.backups.on() {
		cfg.Backup = func(dir *fileio.Dir, name, rel string, st fileio.Stat) error {
			return e.backups.d.Preserve(dir, name, rel, st, true)
		}
	}
	for _, r := range p.roots {
		cfg.Roots = append(cfg.Roots, mirror.Root{Arg: r.src, Dir: r.srcDir, Name: r.name, IsDir: r.isDir, DstRel: r.dstRel})
	}
	for _, arg := range e.opt.LinkDest {
		cfg.LinkDests = append(cfg.LinkDests, mirror.LinkDest{Arg: arg, Path: linkdest.Path(p.dstRoot, arg)})
	}
	m.pass = mirror.New(cfg)
	if err := m.pass.Guard(); err != nil {
		return err
	}
	return e.backups.check(p) // last: it makes the backup directory
}

// noteDir records the listed directory l for --delete. Only a directory
// that existed (one this run made has nothing to delete) and whose source
// listing succeeded (walkDir gets here only then) is noted.
func (m *mirrorStage) noteDir(l *dirList) {
	if !m.e.opt.Delete || l.dd == nil || l.w.created {
		return
	}
	st, err := l.dd.Stat()
	if err != nil {
		return // not noted: its extras are kept
	}
	d := mirror.Dir{DstRel: l.w.dstRel, SrcRel: l.w.srcRel, SrcRoot: l.w.root.srcDir, Dev: st.Dev, Ino: st.Ino, Respelled: l.w.respelled, Names: make([]string, 0, 2*len(l.dstNames))}
	if l.p.Fold != nil {
		d.Fold, d.Normalises = true, l.p.Fold.Normalises
	}
	for i, n := range l.dstNames {
		d.Names = append(d.Names, n, l.ls.Names[i].Name)
	}
	m.pass.Note(d)
}

// finish removes what the sources lack, after the copy is verified and
// durable (mirror.Pass.Finish), and counts what --max-delete refused.
func (m *mirrorStage) finish() error {
	e := m.e
	if !e.opt.Delete || e.dstRoot == nil {
		return nil
	}
	err := m.pass.Finish(e.ctx, e.failedPaths())
	var me *MaxDeleteError
	if errors.As(err, &me) {
		e.count(func(s *Summary) { s.WouldDelete = me.Planned })
	}
	return err
}

// record remembers, after a run that finished, the filesystem each
// mirrored source root was on (mirror.Pass.Record).
func (m *mirrorStage) record() {
	if m.pass != nil {
		m.pass.Record()
	}
}

// OpenDest opens the destination directory rel beneath the root without
// following symlinks (mirror.Proof).
func (m *mirrorStage) OpenDest(rel string) (*fileio.Dir, error) { return m.e.staged.dirs.OpenDir(rel) }

// Ours reports whether name in dir (at dstRel) is fastcopy's own, which
// --delete leaves to the walk (made.Record.Own).
func (m *mirrorStage) Ours(dir *fileio.Dir, dstRel, name string) bool {
	return m.e.made.Own(dir, dstRel, name)
}

// Excluded reports whether the filter rules leave srcRel out (filter.go).
func (m *mirrorStage) Excluded(srcRoot, srcRel string, n fileio.DirEntry) bool {
	return m.e.excluded(srcRoot, nil, srcRel, n)
}

// History reports whether rel is DEST's ASC MHL history, which the run
// extends (internal/records).
func (m *mirrorStage) History(rel string) bool { return m.e.opt.MHL && records.IsMHLFolder(rel) }

// Cache reports whether name in dir is the hash cache's, left out of the
// source walk too (walk.go).
func (m *mirrorStage) Cache(dir *fileio.Dir, name string, st fileio.Stat) bool {
	own := &m.e.walker.src.Own
	return own.IsFile(&st) || st.IsRegular() && own.Journal(dir, name)
}

// Removed counts and reports an entry --delete removed (mirror.Report).
func (m *mirrorStage) Removed(rel string) { m.e.deleted(rel) }

// Kept notes that the extras of dir were kept, and why.
func (m *mirrorStage) Kept(dir, why string) {
	name := dir
	if name == "" {
		name = "."
	}
	m.e.count(func(s *Summary) { s.DeleteKept = append(s.DeleteKept, fmt.Sprintf("%q: %s", name, why)) })
}

// Failed records a removal that failed; the run goes on.
func (m *mirrorStage) Failed(rel string, err error) { m.e.fail(rel, err) }

// Planned reports an entry --delete would remove, refused by --max-delete.
func (m *mirrorStage) Planned(rel string) { m.e.event(ActWouldDelete, rel) }

// deleted counts and reports an entry --delete removed; in a dry run, one
// it would remove (Summary.WouldDelete, reported as would-delete).
func (e *engine) deleted(rel string) {
	e.count(func(s *Summary) {
		if e.skipWrite() {
			s.WouldDelete++
		} else {
			s.Deleted++
		}
	})
	e.event(ActDelete, rel)
}

// checkMirror refuses the mirror and move options in combinations Run
// cannot carry out, and makes Move decide by digest (Checksum): a source
// file found unchanged is removed only when its content is known equal.
func (o *Options) checkMirror() error {
	if err := mirror.CheckFlags(o.Delete, o.DeleteForce, o.MaxDelete); err != nil {
		return err
	}
	if o.Move {
		if err := move.CheckFlags(o.Dereference, o.Verify != VerifyOff); err != nil {
			return err
		}
	}
	if err := backupdir.CheckArg(o.BackupDir); err != nil {
		return err
	}
	if o.Move {
		o.Checksum = true
	}
	return nil
}

// removes says whether the run removes anything once the copy is durable.
func (e *engine) removes() bool { return e.opt.Delete || e.opt.Move }
