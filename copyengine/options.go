package copyengine

import (
	"time"

	"github.com/fastcopy/fastcopy/dedup"
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/filter"
	"github.com/fastcopy/fastcopy/internal/preflight"
	"github.com/fastcopy/fastcopy/internal/source"
	"github.com/fastcopy/fastcopy/internal/throttle"
)

// Reflink says when the data path may clone blocks instead of copying
// them: auto, always or never (preflight.Reflink, a pflag.Value).
type Reflink = preflight.Reflink

// The --reflink modes.
const (
	ReflinkAuto   = preflight.ReflinkAuto   // clone where source and destination share a filesystem that can
	ReflinkAlways = preflight.ReflinkAlways // clone or fail the file
	ReflinkNever  = preflight.ReflinkNever  // always write independent blocks
)

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
	// (internal/records). MHLToolVersion is the version written as the creator
	// tool's (and in a bag's Bag-Software-Agent).
	MHL            bool
	MHLToolVersion string
	// Records in other formats than xxh128 (internal/records): the
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
	bagRoot      string     // the bag, Dest as given, once Check made Dest its payload (records.Options.Check)
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
	if o.Stats == nil {
		o.Stats = &Stats{}
	}
	// The modes and the combinations of values (preflight.CheckOptions);
	// the modes it defaults are kept even when it refuses.
	po := preflight.Options{Reflink: o.Reflink, Verify: o.Verify, Dedup: o.Dedup, Names: o.Names,
		BwLimit: o.BwLimit, Jobs: o.Jobs, Sources: o.Sources, Dest: o.Dest, LinkDest: o.LinkDest}
	err := preflight.CheckOptions(&po)
	o.Reflink, o.Verify, o.Dedup, o.Names = po.Reflink, po.Verify, po.Dedup, po.Names
	if err != nil {
		return err
	}
	rules, err := o.filterRules()
	if err != nil {
		return err
	}
	o.rules = rules
	if err := o.checkMirror(); err != nil {
		return err
	}
	if err := o.checkRecords(); err != nil { // internal/records
		return err
	}
	if len(o.Sources) > 0 && (o.Jobs <= 0 || o.JobsReason == "") {
		o.Jobs, o.JobsReason = ChooseJobsFor(o.Jobs, o.Sources[0], o.Dest)
	}
	if err := preflight.CheckOrder(&o.ReadOrder); err != nil {
		return err
	}
	if len(o.Sources) > 0 && (o.ReadOrder == "" || o.ReadOrder == ReadOrderAuto || o.ReadOrderReason == "") {
		o.ReadOrder, o.ReadOrderReason = ChooseReadOrder(o.ReadOrder, o.Sources[0])
	}
	return nil
}
