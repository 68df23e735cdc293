package copyengine

import (
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/fastcopy/fastcopy/dedup"
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/verify"
)

// Reflink says when the data path may clone blocks instead of copying them.
type Reflink string

// The --reflink modes.
const (
	ReflinkAuto   Reflink = "auto"   // clone where source and destination share a filesystem that can
	ReflinkAlways Reflink = "always" // clone or fail the file
	ReflinkNever  Reflink = "never"  // always write independent blocks
)

// VerifyMode says how a written file is read back before it takes its name.
type VerifyMode string

// The --verify modes.
const (
	VerifyDevice VerifyMode = "device" // flush, drop the cached pages, read from the device
	VerifyCache  VerifyMode = "cache"  // read back through the page cache
	VerifyOff    VerifyMode = "off"    // no read-back
)

// Options configure one run. The zero value of every field but Sources and
// Dest is a sensible default.
type Options struct {
	Sources []string // files or directories to copy
	Dest    string   // the destination (see Run for the rules)

	Jobs        int    // copy workers; 0 chooses from the devices (ChooseJobs)
	JobsReason  string // why Jobs is what it is, for the summary
	Reflink     Reflink
	Verify      VerifyMode
	Dereference bool       // follow symlinks inside the tree (-L)
	NoSync      bool       // skip the flush to stable storage
	NoResume    bool       // neither keep nor take up the temporary of an interrupted large file
	Force       bool       // recopy files whose size and mtime already match
	DryRun      bool       // report what would be done, write nothing
	Excludes    []string   // glob patterns, matched on the relative path and the base name
	Manifest    string     // write an xxhsum -H2 manifest of the copied files here
	Dedup       dedup.Mode // share identical content: auto, clone, hardlink, off ("" = auto)
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

	// hooks are set by tests only (hooks.go): the zero value is every
	// other run's.
	hooks hooks
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
	ActWouldDo    Action = "would-copy" // dry run
	ActCleanTmp   Action = "remove-temp"
	ActOwnCache   Action = "own-cache" // this run's own hash cache, left out of the source
	ActResume     Action = "resume"    // the copy takes up an interrupted run's temporary at Event.Resumed
	ActRetry      Action = "retry"     // a source read failed: the file is read again (Err says why)
)

// Event reports one entry acted on. Path is relative to the destination
// root; Err is set for ActFail.
type Event struct {
	Action Action
	Path   string
	Err    error
	// Resumed is, for ActResume, how many bytes of the temporary an
	// interrupted run left were found equal to the source and kept.
	Resumed int64
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

// Failure is one file that could not be copied.
type Failure struct {
	Path string `json:"path"`
	Err  string `json:"error"`
}

// MarshalJSON writes f as {"path", "error"}, and "path_base64" (the name's
// exact bytes) when Path is not valid UTF-8: JSON strings hold only
// Unicode, so "path" then shows U+FFFD where the name has bytes that are
// not, and only path_base64 names the file.
func (f Failure) MarshalJSON() ([]byte, error) {
	type plain Failure
	v := struct {
		plain
		PathBase64 []byte `json:"path_base64,omitempty"`
	}{plain: plain(f), PathBase64: verify.PathBytes(f.Path)}
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
	Symlinks        int64         `json:"symlinks"`              // symlinks created
	Specials        int64         `json:"specials"`              // fifos, sockets, devices created
	Dirs            int64         `json:"dirs"`                  // directories created
	Skipped         int64         `json:"skipped"`               // unchanged
	MetaUpdated     int64         `json:"metadata_only"`         // unchanged data, metadata brought up to date
	Failed          int64         `json:"failed"`                // entries that failed
	Bytes           int64         `json:"bytes"`                 // bytes of data written or cloned
	Verified        int64         `json:"verified"`              // files read back and matched
	VerifiedBytes   int64         `json:"verified_bytes"`        // bytes read back and matched
	Mismatches      int64         `json:"mismatches"`            // files that failed verification twice
	Deduped         int64         `json:"deduplicated"`          // files placed by sharing identical content
	DedupCloned     int64         `json:"dedup_cloned"`          // of Deduped, by reflink
	DedupLinked     int64         `json:"dedup_hardlinked"`      // of Deduped, by hard link
	BytesNotWritten int64         `json:"bytes_not_written"`     // data not written thanks to dedup
	DiskSaved       int64         `json:"disk_bytes_saved"`      // allocation saved by sharing (clones and links)
	DedupNote       string        `json:"dedup_note,omitempty"`  // why dedup fell back, when it did
	VerifyNote      string        `json:"verify_note,omitempty"` // why the read-back is weaker than asked, when it is
	StagingNote     string        `json:"stage_note,omitempty"`  // why new directories were not staged, when they were not
	CacheHits       int64         `json:"cache_hits"`            // digests taken from the hash cache instead of reading
	BytesHashed     int64         `json:"bytes_hashed"`          // bytes read only to compute digests for decisions
	BytesRead       int64         `json:"bytes_read"`            // all file content read: copies, read-backs, hashing
	TempsRemoved    int64         `json:"temps_removed"`         // leftovers of an interrupted run removed
	Resumed         int64         `json:"resumed"`               // copies that took up an interrupted run's temporary
	BytesResumed    int64         `json:"bytes_resumed"`         // bytes of those temporaries kept, not written again
	Retries         int64         `json:"retries"`               // source reads tried again after an I/O error
	Elapsed         time.Duration `json:"elapsed_ns"`
	Jobs            int           `json:"jobs"`
	JobsReason      string        `json:"jobs_reason"`
	Verify          VerifyMode    `json:"verify"`
	DryRun          bool          `json:"dry_run"`
	Failures        []Failure     `json:"failures"`
}
