package copyengine

import (
	"encoding/json"
	"fmt"
	"github.com/fastcopy/fastcopy/internal/source"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fastcopy/fastcopy/dedup"
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/filter"
	"github.com/fastcopy/fastcopy/internal/pathjson"
	"github.com/fastcopy/fastcopy/internal/throttle"
	"github.com/fastcopy/fastcopy/verify"
)

// Reflink says when the data path may clone blocks instead of copying them.
// It is a pflag.Value: Set parses and validates, so a flag and a library
// caller get the same checks.
type Reflink string

// The --reflink modes.
const (
	ReflinkAuto   Reflink = "auto"   // clone where source and destination share a filesystem that can
	ReflinkAlways Reflink = "always" // clone or fail the file
	ReflinkNever  Reflink = "never"  // always write independent blocks
)

// String returns the mode's name ("auto" for the zero value).
func (r Reflink) String() string {
	if r == "" {
		return string(ReflinkAuto)
	}
	return string(r)
}

// Set parses s as a mode: auto, always or never.
func (r *Reflink) Set(s string) error {
	switch v := Reflink(s); v {
	case ReflinkAuto, ReflinkAlways, ReflinkNever:
		*r = v
		return nil
	}
	return fmt.Errorf("must be auto, always or never, not %q", s)
}

// Type names the value's kind for help text.
func (r *Reflink) Type() string { return "mode" }

// VerifyMode says how a written file is read back before it takes its name.
// It is a pflag.Value, as Reflink is.
type VerifyMode string

// The --verify modes.
const (
	VerifyDevice VerifyMode = "device" // flush, drop the cached pages, read from the device
	VerifyCache  VerifyMode = "cache"  // read back through the page cache
	VerifyOff    VerifyMode = "off"    // no read-back
)

// String returns the mode's name ("device" for the zero value).
func (v VerifyMode) String() string {
	if v == "" {
		return string(VerifyDevice)
	}
	return string(v)
}

// Set parses s as a mode: device, cache or off.
func (v *VerifyMode) Set(s string) error {
	switch m := VerifyMode(s); m {
	case VerifyDevice, VerifyCache, VerifyOff:
		*v = m
		return nil
	}
	return fmt.Errorf("must be device, cache or off, not %q", s)
}

// Type names the value's kind for help text.
func (v *VerifyMode) Type() string { return "mode" }

// Options configure one run. The zero value of every field but Sources and
// Dest is a sensible default; Run applies the defaults and refuses values
// it does not know (see Check).
type Options struct {
	Sources []string // files or directories to copy
	Dest    string   // the destination (see Run for the rules)

	Jobs        int    // copy workers; 0 chooses from the devices (ChooseJobsFor)
	JobsReason  string // why Jobs is what it is, for the summary ("" = Check asks ChooseJobsFor)
	Reflink     Reflink
	Verify      VerifyMode
	Dereference bool     // follow symlinks inside the tree (-L)
	NoSync      bool     // skip the flush to stable storage
	NoResume    bool     // neither keep nor take up the temporary of an interrupted large file
	Force       bool     // recopy files whose size and mtime already match
	DryRun      bool     // report what would be done, write nothing
	Excludes    []string // exclude patterns, as exclude rules after Filter's
	Manifest    string   // write an xxhsum -H2 manifest of the copied files here
	// MHL records the run as the next generation of DEST's ASC MHL
	// history (DEST/ascmhl), once the copy is verified and durable: every
	// source file in place, copied or found unchanged, with its xxh128
	// (mhl.go). MHLToolVersion is the version written as the creator
	// tool's (and in a bag's Bag-Software-Agent).
	MHL            bool
	MHLToolVersion string
	// Records in other formats than xxh128 (records.go, bag.go): the
	// digests are computed in the same read of each source as its xxh128.
	// ManifestHash is the format of Manifest's (and the bag's) digests:
	// "" or xxh128 for xxhsum -H2 lines, else sha256, sha512, blake3,
	// md5, sha1, xxh64 or xxh3 in the line format of the coreutils tool.
	// MHLHashes are the formats of each file of the ASC MHL generation
	// (nil: xxh128). Bag makes Dest a BagIt bag: the payload is copied to
	// Dest/data and the bag's manifests and tag files are written once it
	// is durable; BagHash is its manifest's format (sha256 or sha512; ""
	// takes ManifestHash when that is one of them, else sha256); BagInfo
	// are bag-info.txt fields given as "Key: value" or "KEY=VALUE".
	ManifestHash string
	MHLHashes    []string
	Bag          bool
	BagHash      string
	BagInfo      []string
	bagRoot      string     // the bag, Dest as given, once Check made Dest its payload (bag.go)
	Dedup        dedup.Mode // share identical content: auto, clone, hardlink, off ("" = auto)
	// DedupVerifyBytes compares a duplicate with the file it will share
	// byte for byte before sharing it, instead of trusting equal digests.
	DedupVerifyBytes bool
	// Cache, when set, remembers digests of sources read and destinations
	// verified, so that a rerun decides "unchanged" from two stats and two
	// lookups. The caller opens and closes it.
	Cache *hashcache.Cache
	// Checksum decides by digest for every file whose size matches, even
	// when the mtimes differ or no cache entry vouches for it.
	Checksum bool
	// NoSpaceCheck skips the check that the run fits in the destination's
	// free space before anything is written.
	NoSpaceCheck bool
	// Names says what to do with names the destination cannot hold:
	// strict (the default) fails each such file, encode writes look-alike
	// characters instead, decode undoes encode (see NamesMode).
	Names NamesMode
	// Retries is how many times a file whose source fails to read (EIO)
	// is read again from its start, after 100 ms, then twice as long each
	// time: 0 means DefaultRetries, a negative number none.
	Retries int

	// Stats, when set, receives live counters during the run (for a
	// progress bar); Run allocates its own otherwise.
	Stats *Stats
	// OnEvent, when set, is called for each file acted on and each failure.
	// It may be called from several goroutines at once.
	OnEvent func(Event)

	// Filter holds --include and --exclude rules in the order given: the
	// first whose pattern matches a path (relative to its source
	// directory) decides whether it is copied; a path none matches is.
	// An excluded directory is neither created nor walked. The pattern
	// syntax is internal/filter's ('fastcopy help filters').
	Filter []FilterRule
	// FilesFrom, when not nil, lists the paths (relative to each source
	// directory) to copy: only those, the directories leading to them,
	// and all below a listed directory; Filter still applies to each.
	FilesFrom []string
	// GitIgnore leaves out what git ignores in each source tree: its
	// .gitignore files, and the .git/info/exclude and core.excludesFile
	// of the repository it is in; ".git" itself at every depth. Filter
	// and FilterFile's rules are asked first (internal/filter, Config).
	GitIgnore bool
	// FilterFile, when not "", names per-directory files of Filter's
	// syntax ("- GLOB", "+ GLOB"), each applying to its directory and
	// below, asked after Filter and before GitIgnore.
	FilterFile string

	rules *filter.Rules // Filter, Excludes, FilesFrom, GitIgnore and FilterFile compiled by Check

	// hooks are set by tests only (hooks.go): the zero value is every
	// other run's.
	hooks hooks
	// share and shareID: a run of RunAll reads the source through the
	// share, as run shareID (a bit), with the runs to the other
	// destinations (internal/source).
	share   *source.Share
	shareID uint64

	// The audit log (--log): when set, OnFlush is called each time every
	// filesystem the run writes in has been flushed to stable storage
	// (after each commit batch's flush, once at the end of the copy, and
	// once more after the removals of Delete, BackupDir and Move, with the
	// sources Move removed from): whatever an Event with a Time before at
	// reported is then durable.
	// It is called from one goroutine at a time, never with --no-sync
	// (nothing is waited for) or --dry-run (nothing is written). See
	// docs/design.md, Pipeline.
	OnFlush func(at time.Time)

	// Bandwidth (--bwlimit): BwLimit, when above 0, is the most bytes per
	// second the run reads and writes together, shared by all workers
	// (package throttle says what is counted). throttle, when set, replaces
	// the limiter BwLimit makes (tests).
	BwLimit  int64
	throttle throttle.Throttle

	// Backup decisions (update.go, linkdest.go), with rsync's meanings.
	//
	// Update leaves alone a source file whose destination is a regular
	// file with a newer mtime (compared at the coarser resolution of the
	// two filesystems): neither its data nor its metadata is touched.
	// It concerns regular files on both sides only (rsync --update).
	Update bool
	// IgnoreExisting leaves alone every source entry but a directory whose
	// destination name exists, whatever it holds: not even its metadata
	// is brought up to date (rsync --ignore-existing).
	IgnoreExisting bool
	// LinkDest names directories holding an earlier copy (a snapshot): a
	// file to be copied whose counterpart at the same relative path there
	// has the same content (by digest) and the metadata the copy would
	// have becomes a hard link to it instead of a new copy. The first
	// directory that matches wins; a relative one is taken relative to the
	// destination directory (rsync --link-dest).
	LinkDest []string

	// Scrub, when above zero, re-reads from the device, before the copy,
	// the DEST files the hash cache holds whose bytes were last read from
	// the device longer ago than Scrub (hashcache.Entry.ReadAt; never,
	// for entries that do not say), oldest first, up to ScrubMax bytes
	// (DefaultScrubMax when zero): a file whose bytes are not those its
	// entry recorded, its stat unchanged, is rotten, named in
	// Summary.Rotten, and copied again from a source that still holds
	// the recorded digest (scrub.go). It needs a Cache.
	Scrub    time.Duration
	ScrubMax int64

	// Mirror and verified move (mirror.go and internal/mirror, backupdir.go
	// and internal/backupdir, move.go; see docs/design.md, Mirror and
	// verified move).

	// Delete removes from each directory copied what its source lacks,
	// once every file of the run is verified and durable, and only in
	// directories listed in full in which nothing failed. Excluded names
	// are kept.
	Delete bool
	// DeleteForce lets Delete go on when a source root is empty, or on
	// another filesystem than the last time it was mirrored there, while
	// its destination is not empty (refused otherwise, before anything is
	// written).
	DeleteForce bool
	// MaxDelete bounds Delete: 0 means no bound; n > 0 stops before
	// anything is deleted when more than n entries would be; a negative
	// number allows none (what would go is listed, nothing is removed).
	MaxDelete int
	// BackupDir, when set, receives what Delete removes and the old
	// version of each file a copy replaces, under its path relative to
	// the destination, instead of their being removed.
	BackupDir string
	// Move removes each source entry once its copy is verified and
	// durable, then the source directories left empty (never a source
	// root). It implies Checksum: a file found unchanged is removed only
	// when its content is known equal by digest.
	Move bool

	// Read order (internal/readorder; the dispatch in readorder.go).
	//
	// ReadOrder says in which order source files are read: auto (the
	// default: disk order on a rotational or USB source, listing order
	// otherwise), disk, inode or listing. Check resolves auto, as it
	// chooses Jobs, unless both ReadOrder and ReadOrderReason are set.
	ReadOrder       ReadOrder
	ReadOrderReason string // why ReadOrder is what it is, for the summary ("" = Check asks ChooseReadOrder)
	// readWindowFiles, when above 0, lowers the most files a read window
	// holds (tests: several windows from a small tree).
	readWindowFiles int
}

// Action is what the engine did with one entry.
type Action string

// The actions an Event reports.
const (
	ActCopy       Action = "copy"        // data written (read/write or copy_file_range)
	ActClone      Action = "clone"       // data cloned (reflink)
	ActLink       Action = "hardlink"    // a hard link of the source kept as a hard link
	ActLinkCopy   Action = "link-copy"   // a hard link of the source copied as a file of its own: the destination has no hard links
	ActDedupClone Action = "dedup-clone" // identical content: a clone of a file already written
	ActDedupLink  Action = "dedup-link"  // identical content: a hard link to a file already written
	ActSymlink    Action = "symlink"
	ActSpecial    Action = "special" // fifo, socket or device node
	ActMkdir      Action = "mkdir"
	ActSkip       Action = "skip"     // unchanged
	ActMeta       Action = "metadata" // only metadata brought up to date
	ActFail       Action = "fail"
	ActNotKept    Action = "not-kept"   // a symlink the destination cannot hold (see Summary.NotKept)
	ActWouldDo    Action = "would-copy" // dry run: ActCopy.Would() (see Would)
	ActCleanTmp   Action = "remove-temp"
	ActLeaveTemp  Action = "leave-temp" // named like a temporary, but no record shows a run made it: left alone (internal/made)
	ActOwnCache   Action = "own-cache"  // this run's own hash cache, left out of the source
	ActResume     Action = "resume"     // the copy takes up an interrupted run's temporary at Event.Resumed
	ActRetry      Action = "retry"      // a source read failed: the file is read again (Err says why)
	// ActLinkDest: a hard link to the identical file under a LinkDest
	// directory, instead of a copy.
	ActLinkDest Action = "link-dest"
	// ActLinkDestCopy: a file that matched under a LinkDest directory but
	// could not be linked to it (Err says why: out of links, another
	// filesystem); it is copied instead.
	ActLinkDestCopy Action = "link-dest-copy"
	// ActRotten: a file whose bytes on the device are not the digest its
	// hash-cache entry recorded while its stat is unchanged: a DEST file
	// --scrub read (Path is DEST's), or a --link-dest counterpart (Path
	// is the file's in DEST, which was copied, not linked); Err says what
	// was found and done. Summary.Rotten has the same sentence.
	ActRotten Action = "rotten"

	ActDelete       Action = "delete"        // --delete removed an entry the source lacks
	ActWouldDelete  Action = "would-delete"  // dry run, or refused by --max-delete: --delete would remove it
	ActBackup       Action = "backup"        // --backup-dir: an old version (deleted or replaced) moved there; Path is the destination's
	ActRemoveSource Action = "remove-source" // --move: the source entry removed once its copy was durable; Path is the destination's
	// ActWouldRemoveSource: dry run, --move would remove the source entry
	// (a directory: Path ends in "/"); Path is the destination's.
	ActWouldRemoveSource Action = "would-remove-source"
)

// writes are the actions that write or remove something in the real run:
// a dry run names each as Would does.
var writes = map[Action]bool{
	ActCopy: true, ActClone: true, ActLink: true, ActLinkCopy: true, ActDedupClone: true,
	ActDedupLink: true, ActSymlink: true, ActSpecial: true, ActMkdir: true, ActMeta: true,
	ActCleanTmp: true, ActResume: true, ActLinkDest: true, ActLinkDestCopy: true,
	ActDelete: true, ActBackup: true, ActRemoveSource: true,
}

// Would is the name a dry run reports a by: "would-" and the real run's
// name for an action that writes or removes (would-copy, would-symlink,
// would-hardlink, would-backup, would-delete, ...); a itself for one that
// does not (skip, fail, not-kept) or that says "would" already.
func (a Action) Would() Action {
	if writes[a] {
		return "would-" + a
	}
	return a
}

// Real is the real run's name of an action a dry run reports (Would
// undone): "copy" for "would-copy"; a itself for any other.
func (a Action) Real() Action {
	if r, ok := strings.CutPrefix(string(a), "would-"); ok && writes[Action(r)] {
		return Action(r)
	}
	return a
}

// Event reports one entry acted on. Path is relative to the destination
// root; Err is set for ActFail.
type Event struct {
	Action Action
	Path   string
	Err    error
	// Resumed is, for ActResume, how many bytes of the temporary an
	// interrupted run left were found equal to the source and kept.
	Resumed int64
	// Size is the file's length, for the actions on regular files.
	Size int64
	// Sum is the file's xxh128 where the run knows it, zero otherwise:
	// for copy, clone, link-copy, dedup-clone and dedup-link the source's
	// digest, which the read-back matched (with --verify=off, the one taken
	// while it was read; none for a copy_file_range copy or an unhashed
	// clone); for skip, metadata and hardlink the digest both sides were
	// found to hold, when one was read or the cache vouched for both.
	Sum verify.Sum
	// Time is when the engine reported the event: for a file placed, after
	// it took its final name. OnFlush compares its argument with it.
	Time time.Time
}

// Stats are live counters; read them with the atomic methods at any time.
// Totals grow while the scan runs; ScanDone says when they are final.
type Stats struct {
	FilesTotal    atomic.Int64
	BytesTotal    atomic.Int64
	FilesDone     atomic.Int64 // copied, skipped or failed
	BytesDone     atomic.Int64 // bytes of files done (written or skipped)
	BytesWritten  atomic.Int64
	BytesVerified atomic.Int64
	BytesRead     atomic.Int64 // file content read: sources, read-backs, hash checks
	ScanDone      atomic.Bool
}

// Failure is one file that could not be copied. It is an error that wraps
// the file's cause, for errors.Is and errors.As (a MismatchError, a
// fileio sentinel, a syscall.Errno); JSON carries only Path and Err.
type Failure struct {
	Path string `json:"path"`
	Err  string `json:"error"` // the cause, without the path (ErrText)
	err  error
}

func newFailure(path string, err error) Failure {
	return Failure{Path: path, Err: ErrText(err), err: err}
}

// Error returns the path, quoted, and the cause, as the command line
// prints a failure.
func (f Failure) Error() string { return fmt.Sprintf("%q: %s", f.Path, f.Err) }

// Unwrap returns the error the file failed with.
func (f Failure) Unwrap() error { return f.err }

// MarshalJSON writes f as {"path", "error"}, and "path_base64" (the name's
// exact bytes) when Path is not valid UTF-8: JSON strings hold only
// Unicode, so "path" then shows U+FFFD where the name has bytes that are
// not, and only path_base64 names the file.
func (f Failure) MarshalJSON() ([]byte, error) {
	type plain Failure
	v := struct {
		plain
		PathBase64 []byte `json:"path_base64,omitempty"`
	}{plain: plain(f), PathBase64: pathjson.Bytes(f.Path)}
	return json.Marshal(v)
}

// Summary is the outcome of a run.
type Summary struct {
	Copied        int64    `json:"copied"`                    // regular files whose data was written or cloned
	Cloned        int64    `json:"cloned"`                    // of Copied, by reflink
	Linked        int64    `json:"hardlinked"`                // source hard links kept
	LinkCopies    int64    `json:"hardlinks_copied"`          // of Copied, further names of a source inode copied separately (no hard links at the destination)
	LinkCopyPaths []string `json:"hardlink_copies,omitempty"` // those names
	// NotKept says, once per run, what the destination's filesystem could
	// not keep of what the source has (hard links, ACLs, ...) and what was
	// done instead: one sentence each.
	NotKept         []string      `json:"not_kept,omitempty"`
	Symlinks        int64         `json:"symlinks"`               // symlinks created
	Specials        int64         `json:"specials"`               // fifos, sockets, devices created
	Dirs            int64         `json:"dirs"`                   // directories created
	Skipped         int64         `json:"skipped"`                // unchanged
	MetaUpdated     int64         `json:"metadata_only"`          // unchanged data, metadata brought up to date
	Failed          int64         `json:"failed"`                 // entries that failed
	Bytes           int64         `json:"bytes"`                  // bytes of data written or cloned
	Verified        int64         `json:"verified"`               // files read back and matched
	VerifiedBytes   int64         `json:"verified_bytes"`         // bytes read back and matched
	Mismatches      int64         `json:"mismatches"`             // files that failed verification twice
	Deduped         int64         `json:"deduplicated"`           // files placed by sharing identical content
	DedupCloned     int64         `json:"dedup_cloned"`           // of Deduped, by reflink
	DedupLinked     int64         `json:"dedup_hardlinked"`       // of Deduped, by hard link
	BytesNotWritten int64         `json:"bytes_not_written"`      // data not written thanks to dedup
	DiskSaved       int64         `json:"disk_bytes_saved"`       // allocation saved by sharing (clones and links)
	DedupNote       string        `json:"dedup_note,omitempty"`   // why dedup fell back, when it did
	VerifyNote      string        `json:"verify_note,omitempty"`  // why the read-back is weaker than asked, when it is
	StagingNote     string        `json:"stage_note,omitempty"`   // why new directories were not staged, when they were not
	CacheHits       int64         `json:"cache_hits"`             // digests taken from the hash cache instead of reading
	BytesHashed     int64         `json:"bytes_hashed"`           // bytes read only to compute digests for decisions
	BytesRead       int64         `json:"bytes_read"`             // all file content read: copies, read-backs, hashing
	BytesShared     int64         `json:"bytes_shared,omitempty"` // several destinations: source bytes taken from another destination's read instead of read again (not in BytesRead)
	TempsRemoved    int64         `json:"temps_removed"`          // leftovers of an interrupted run removed
	Resumed         int64         `json:"resumed"`                // copies that took up an interrupted run's temporary
	BytesResumed    int64         `json:"bytes_resumed"`          // bytes of those temporaries kept, not written again
	Retries         int64         `json:"retries"`                // source reads tried again after an I/O error
	Elapsed         time.Duration `json:"elapsed_ns"`
	Jobs            int           `json:"jobs"`
	JobsReason      string        `json:"jobs_reason"`
	Verify          VerifyMode    `json:"verify"`
	DryRun          bool          `json:"dry_run"`
	// LinkDest counts the files made hard links to their identical
	// counterparts under a --link-dest directory (LinkDest in Options).
	LinkDest int64 `json:"link_dest"`
	// LinkDestNotes says, once per directory, why a --link-dest directory
	// was of no use (missing, not a directory), and what files could not
	// be linked and were copied instead.
	LinkDestNotes []string `json:"link_dest_notes,omitempty"`
	// Scrubbed and BytesScrubbed count the DEST files --scrub read from
	// the device.
	Scrubbed      int64 `json:"scrubbed"`
	BytesScrubbed int64 `json:"bytes_scrubbed"`
	// Rotten names, one sentence each, the files found not to hold the
	// bytes their hash-cache entry recorded although their stat is as it
	// was (rot on the device): a --link-dest counterpart (not linked to;
	// the file was copied) or, with --scrub, a DEST file (recopied from
	// the source where the source still holds that digest, else failed).
	Rotten   []string  `json:"rotten,omitempty"`
	Failures []Failure `json:"failures"`
	BwLimit  int64     `json:"bwlimit,omitempty"` // --bwlimit: bytes per second, reads and writes together (0: none)

	// Mirror and verified move.
	Deleted        int64    `json:"deleted"`               // entries --delete removed (a directory and each entry in it count)
	WouldDelete    int64    `json:"would_delete"`          // dry run or --max-delete refusal: entries --delete would remove
	DeleteKept     []string `json:"delete_kept,omitempty"` // directories whose extras were kept, each with why
	BackedUp       int64    `json:"backed_up"`             // old versions moved to --backup-dir
	SourcesRemoved int64    `json:"sources_removed"`       // --move: source entries removed
	SourceDirsGone int64    `json:"source_dirs_removed"`   // --move: source directories removed, left empty
	// SourcesKept counts the sources --move left in place without a
	// failure: kept by -u or --ignore-existing, or because the
	// destination could not keep their extended attributes or ACLs;
	// MoveKept says why, once per reason.
	SourcesKept int64    `json:"sources_kept"`
	MoveKept    []string `json:"move_kept,omitempty"`

	// ASC MHL (--mhl; mhl.go): the generation file written in
	// DEST/ascmhl, its number and how many files it lists; MHLNotes says
	// what the history leaves out and why (a source's own ascmhl folder);
	// MHLError, why no generation was written although the run asked for
	// one (it could not be written, or the run stopped early: a full
	// destination, a drive gone, an interrupt).
	MHL      string   `json:"mhl,omitempty"`
	MHLSeq   int      `json:"mhl_generation,omitempty"`
	MHLFiles int      `json:"mhl_files,omitempty"`
	MHLNotes []string `json:"mhl_notes,omitempty"`
	MHLError string   `json:"mhl_error,omitempty"`
	// BagIt bag (--bag; bag.go): the bag written, its Payload-Oxum and
	// payload manifest; BagError, why its tag files were not written.
	Bag         string `json:"bag,omitempty"`
	BagOxum     string `json:"bag_payload_oxum,omitempty"`
	BagManifest string `json:"bag_manifest,omitempty"`
	BagError    string `json:"bag_error,omitempty"`

	// The read order used (resolved: disk, inode or listing) and why.
	ReadOrder       ReadOrder `json:"read_order"`
	ReadOrderReason string    `json:"read_order_reason"`
}

// Check applies the defaults to the fields left zero and refuses a request
// Run cannot carry out as given, with a *RefusalError, before anything is
// read or written: a mode no flag knows, --dedup=clone with
// --reflink=never, a negative Jobs, an empty path, a malformed --exclude
// pattern. It chooses Jobs (ChooseJobsFor) unless both Jobs and JobsReason
// are set, and resolves ReadOrder auto (ChooseReadOrder) unless both
// ReadOrder and ReadOrderReason are set. Run calls it first; a caller may call it sooner, to refuse a bad
// request before it opens a cache or prints anything. Calling it again
// changes nothing.
func (o *Options) Check() error {
	if o.Reflink == "" {
		o.Reflink = ReflinkAuto
	}
	if o.Verify == "" {
		o.Verify = VerifyDevice
	}
	if o.Stats == nil {
		o.Stats = &Stats{}
	}
	if o.Dedup == "" {
		o.Dedup = dedup.Auto
	}
	if o.Names == "" {
		o.Names = NamesStrict
	}
	if err := o.Reflink.Set(string(o.Reflink)); err != nil {
		return refuse(string(o.Reflink), "is not a --reflink mode: "+err.Error(), "use auto, always or never")
	}
	if err := o.Verify.Set(string(o.Verify)); err != nil {
		return refuse(string(o.Verify), "is not a --verify mode: "+err.Error(), "use device, cache or off")
	}
	if err := o.Dedup.Set(string(o.Dedup)); err != nil {
		return refuse(string(o.Dedup), "is not a --dedup mode: "+err.Error(), "use auto, clone, hardlink or off")
	}
	if err := o.Names.Set(string(o.Names)); err != nil {
		return refuse(string(o.Names), "is not a --names mode: "+err.Error(), "use strict, encode or decode")
	}
	if o.Dedup == dedup.Clone && o.Reflink == ReflinkNever {
		return &RefusalError{Msg: "--dedup=clone needs clones, which --reflink=never forbids; use --dedup=hardlink or --dedup=off"}
	}
	if o.BwLimit < 0 {
		return &RefusalError{Msg: fmt.Sprintf("--bwlimit must be above 0, not %d", o.BwLimit), Hint: "give bytes per second, such as 4M"}
	}
	if o.Jobs < 0 {
		return &RefusalError{Msg: fmt.Sprintf("--jobs must be 1 or more, not %d", o.Jobs)}
	}
	for _, p := range o.Sources {
		if strings.TrimSpace(p) == "" {
			return &RefusalError{Msg: "an argument is empty; name a path"}
		}
	}
	if len(o.Sources) > 0 && strings.TrimSpace(o.Dest) == "" {
		return &RefusalError{Msg: "an argument is empty; name a path"}
	}
	for _, d := range o.LinkDest {
		if strings.TrimSpace(d) == "" {
			return &RefusalError{Msg: "--link-dest is empty; name a directory that holds an earlier copy"}
		}
	}
	rules, err := o.filterRules()
	if err != nil {
		return err
	}
	o.rules = rules
	if err := o.checkMirror(); err != nil {
		return err
	}
	if err := o.checkMHL(); err != nil {
		return err
	}
	if err := o.checkRecords(); err != nil { // records.go
		return err
	}
	if len(o.Sources) > 0 && (o.Jobs <= 0 || o.JobsReason == "") {
		o.Jobs, o.JobsReason = ChooseJobsFor(o.Jobs, o.Sources[0], o.Dest)
	}
	if o.ReadOrder != "" {
		if err := o.ReadOrder.Set(string(o.ReadOrder)); err != nil {
			return refuse(string(o.ReadOrder), "is not an --order: "+err.Error(), "use auto, disk, inode or listing")
		}
	}
	if len(o.Sources) > 0 && (o.ReadOrder == "" || o.ReadOrder == ReadOrderAuto || o.ReadOrderReason == "") {
		o.ReadOrder, o.ReadOrderReason = ChooseReadOrder(o.ReadOrder, o.Sources[0])
	}
	return nil
}
