package records

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/fastcopy/fastcopy/internal/drives"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// Config is a run's records' whole input: what was asked (Options,
// checked by Check), what the run lends them (buffers, DEST as it holds
// it, the directories it went through) and where they answer (OnFlush,
// Failed, Count).
type Config struct {
	Options
	// Get and Put lend and take back the buffers (of verify.BufSize) the
	// hashing of large files copies pieces into (Hashes).
	Get func() *[]byte
	Put func(*[]byte)
	// OnFlush is told that what was reported before a moment is durable
	// (Flushes); nil when no audit log asks.
	OnFlush func(at time.Time)
	// SkipWrite is the dry run's one gate: while it says so, no record
	// is written and OnFlush is never told.
	SkipWrite func() bool
	// TempSuffix ends the name of the manifest's temporary (Manifest).
	TempSuffix string
	// Skip is a name at a bag's payload's top that is not payload (Bag).
	Skip string
	// Dest is DEST as the run holds it, and its path: nil until the run
	// opened it.
	Dest func() (string, *fileio.Dir)
	// Dirs are the directories below Dest the run made or went through.
	Dirs func() []string
	// Failed fails a file by name; Count changes the run's summary
	// under its lock.
	Failed func(path string, err error)
	Count  func(func(*outcome.Summary))
}

// Keeper is a run's records: it lists each outcome the records list (the
// manifest, the ASC MHL generation and the bag share one Set), hashes
// sources in the records' other formats as they are read (Hashes), has
// each record written at its moment of the run, failing by name the
// files a record could not list, and tells the audit log (--log) when
// what was reported is durable (Flushes).
type Keeper struct {
	Hashes  // the formats besides xxh128 the records need (Options.ExtraFormats)
	Flushes // OnFlush, off with NoSync and in a dry run
	cfg     Config
	set     Set
	mhlErr  error // why the ASC MHL generation was not written (WriteMHL)
	bagErr  error // why the bag's tag files were not written (WriteBag)
}

// New makes the records of a run.
func New(cfg Config) *Keeper {
	return &Keeper{
		Hashes:  Hashes{Formats: cfg.ExtraFormats(), Get: cfg.Get, Put: cfg.Put},
		Flushes: Flushes{OnFlush: cfg.OnFlush, Off: cfg.NoSync || cfg.SkipWrite()},
		cfg:     cfg,
	}
}

// Listen is the records' listener to the run's outcomes: an outcome
// Listed is noted for them when the run lists digests.
func (k *Keeper) Listen(o *outcome.Outcome) {
	if o.Listed && k.cfg.ListsSums() {
		k.set.Add(Listed{Path: o.Path, Sum: o.Sum, Extra: o.Extra})
	}
}

// LeaveOut says whether the walk leaves out the entry name of the source
// directory srcDir copied onto the destination root (dstRel ""): with
// MHL, a source's own ascmhl folder (a card offloaded before) is not
// copied as data onto DEST's, whose chain it would replace. The run says
// so once, in the summary's MHLNotes.
func (k *Keeper) LeaveOut(srcDir, dstRel, name string) bool {
	if !k.cfg.MHL || dstRel != "" || !IsMHLFolder(name) {
		return false
	}
	dest, _ := k.cfg.Dest()
	note := fmt.Sprintf("%q is the source's own ASC MHL history: not copied; %q keeps its own history, which this run extends", filepath.Join(srcDir, name), filepath.Join(dest, MHLFolder))
	k.cfg.Count(func(s *outcome.Summary) { s.MHLNotes = append(s.MHLNotes, note) })
	return true
}

// WriteManifest writes the manifest (Manifest) once the run's files are
// in place. Every line's digest is a source's: read this run, or from
// its valid cache entry.
func (k *Keeper) WriteManifest() error {
	o := &k.cfg.Options
	if o.Manifest == "" || k.cfg.SkipWrite() {
		return nil
	}
	m := Manifest{Path: o.Manifest, Format: o.ManifestFormat(), NoSync: o.NoSync, TempSuffix: k.cfg.TempSuffix}
	failed, err := m.Write(&k.set)
	k.failAll(failed)
	return err
}

// WriteMHL records the run as the next generation of DEST's ASC MHL
// history (MHL), once its files are placed and flushed and while it
// holds DEST's lock. The generation lists each file the run put or found
// in place, with the digest the run has for it: for a copy, the
// source's, which its read-back matched (with --verify=off, the one
// taken while the source was read); for a file found unchanged, the one
// both sides were found to hold (read, or from the hash cache's valid
// entries). Files that failed are not listed.
//
// A failure is kept in the summary (MHLError) and returned by Err.
func (k *Keeper) WriteMHL() {
	path, root := k.cfg.Dest()
	if !k.cfg.MHL || k.cfg.SkipWrite() || root == nil {
		return
	}
	m := MHL{
		Root:        root,
		RootPath:    path,
		Formats:     k.cfg.MHLFormatNames(),
		Dirs:        k.cfg.Dirs(),
		ToolVersion: k.cfg.MHLToolVersion,
		VerifyOff:   k.cfg.VerifyOff,
	}
	w, err := m.Write(&k.set)
	if err != nil {
		k.mhlErr = &MHLError{Dest: path, Err: err}
		k.cfg.Count(func(s *outcome.Summary) { s.MHLError = refusal.Text(err) })
		return
	}
	k.cfg.Count(func(s *outcome.Summary) { s.MHL, s.MHLSeq, s.MHLFiles = w.Path, w.Seq, w.Files })
}

// WriteBag writes the bag's tag files (Bag) once the copy is in place
// and durable. A failure is kept in the summary (BagError) and returned
// by Err.
func (k *Keeper) WriteBag() {
	path, payload := k.cfg.Dest()
	o := &k.cfg.Options
	if !o.Bag || k.cfg.SkipWrite() || payload == nil {
		return
	}
	given, _ := o.BagFields() // checked by Check
	b := Bag{
		Payload:     payload,
		PayloadPath: path,
		Root:        o.BagRoot,
		Format:      o.BagFormat(),
		Info:        given,
		Agent:       strings.TrimSpace("fastcopy " + o.MHLToolVersion),
		NoSync:      o.NoSync,
		Skip:        k.cfg.Skip,
	}
	w, failed, err := b.Write(&k.set)
	k.failAll(failed)
	if err != nil {
		k.bagErr = &BagError{Bag: o.BagRoot, Err: err}
		k.cfg.Count(func(s *outcome.Summary) { s.BagError = refusal.Text(err) })
		return
	}
	k.cfg.Count(func(s *outcome.Summary) {
		s.Bag, s.BagOxum, s.BagManifest = o.BagRoot, w.Oxum, filepath.Join(o.BagRoot, w.Manifest)
	})
}

// NoteStopped says in the summary (MHLError) why a run with MHL that
// stopped before its end wrote no generation: a history records only a
// run that reached its end, and the summary of one stopped early by a
// full destination, a drive that went away, an interrupt (interrupted)
// or a fatal error (err) says the history lacks it, as one whose history
// could not be written does. The outcome stays the stop's.
func (k *Keeper) NoteStopped(interrupted, err error) {
	if !k.cfg.MHL || k.cfg.SkipWrite() || (interrupted == nil && err == nil) {
		return
	}
	const after = "a run stopped early writes none; "
	var why string
	switch {
	case interrupted != nil:
		why = "interrupted: " + after + "rerun with --mhl to finish the copy and write it"
	case errors.As(err, new(*drives.DestFullError)):
		why = "destination full: " + after + "make room and rerun with --mhl"
	case errors.As(err, new(*drives.DriveGoneError)):
		why = "a drive went away: " + after + "reconnect it and rerun with --mhl"
	default:
		why = "the run stopped with an error: " + after + "fix the cause and rerun with --mhl"
	}
	k.cfg.Count(func(s *outcome.Summary) {
		if s.MHL == "" && s.MHLError == "" {
			s.MHLError = why
		}
	})
}

// Err is why a record the run put its files in place for was not
// written (an *MHLError or a *BagError), or nil.
func (k *Keeper) Err() error {
	if k.mhlErr != nil {
		return k.mhlErr
	}
	return k.bagErr
}

// failAll fails by name the files a record could not list.
func (k *Keeper) failAll(failed []Failure) {
	for _, f := range failed {
		k.cfg.Failed(f.Path, f.Err)
	}
}
