package outcome

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/fastcopy/fastcopy/internal/pathjson"
	"github.com/fastcopy/fastcopy/internal/readorder"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// VerifyMode says how a written file is read back before it takes its name.
// It is a pflag.Value, as copyengine.Reflink is.
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
// the file's cause, for errors.Is and errors.As (a refusal.Mismatch, a
// fileio sentinel, a syscall.Errno); JSON carries only Path and Err.
type Failure struct {
	Path string `json:"path"`
	Err  string `json:"error"` // the cause, without the path (refusal.Text)
	err  error
}

// NewFailure is the failure of the file at path with err.
func NewFailure(path string, err error) Failure {
	return Failure{Path: path, Err: refusal.Text(err), err: err}
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
	// counterparts under a --link-dest directory (copyengine.Options
	// LinkDest).
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

	// ASC MHL (--mhl; internal/records): the generation file written in
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
	// BagIt bag (--bag; internal/records): the bag written, its Payload-Oxum and
	// payload manifest; BagError, why its tag files were not written.
	Bag         string `json:"bag,omitempty"`
	BagOxum     string `json:"bag_payload_oxum,omitempty"`
	BagManifest string `json:"bag_manifest,omitempty"`
	BagError    string `json:"bag_error,omitempty"`

	// The read order used (resolved: disk, inode or listing) and why.
	ReadOrder       readorder.Order `json:"read_order"`
	ReadOrderReason string          `json:"read_order_reason"`
}

// Add adds o to the summary's counts: the only place the per-kind counts
// are added to. verified says the run reads its copies back (Verify is
// not off): a copy, clone or duplicate placed is then counted as
// verified. A Removed outcome adds nothing (--delete and --move count
// their removals themselves).
func (s *Summary) Add(o *Outcome, verified bool) {
	switch o.Kind {
	case Failed:
		s.Failed++
		s.Failures = append(s.Failures, NewFailure(o.Path, o.Err))
		var mm *refusal.Mismatch
		if errors.As(o.Err, &mm) {
			s.Mismatches++
		}
		return
	case Skipped:
		s.Skipped++
		return
	case Fixed:
		s.Skipped++
		s.MetaUpdated++
		return
	case Linked:
		s.Linked++
		return
	case Placed:
	default:
		return
	}
	switch a := o.Action; a {
	case ActDedupClone, ActDedupLink:
		s.Deduped++
		s.BytesNotWritten += o.Size
		s.DiskSaved += o.Size
		if a == ActDedupClone {
			s.DedupCloned++
		} else {
			s.DedupLinked++
		}
	case ActCopy, ActClone:
		s.Copied++
		s.Bytes += o.Size
		if a == ActClone {
			s.Cloned++
		}
		if o.LinkCopy {
			s.LinkCopies++
			s.LinkCopyPaths = append(s.LinkCopyPaths, o.Path)
		}
	case ActSymlink:
		s.Symlinks++
		return
	case ActSpecial:
		s.Specials++
		return
	case ActLinkDest:
		s.LinkDest++
		return
	default: // ActNotKept: said once per run (Summary.NotKept)
		return
	}
	if verified {
		s.Verified++ // read back (copyengine's committer.placed)
		s.VerifiedBytes += o.Size
	}
}
