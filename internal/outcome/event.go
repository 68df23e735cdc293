package outcome

import (
	"strings"
	"time"

	"github.com/fastcopy/fastcopy/verify"
)

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
	// it took its final name. copyengine's Options.OnFlush compares its
	// argument with it.
	Time time.Time
}

// EventOf is the event an outcome is reported as.
func EventOf(o *Outcome) Event {
	if o.Kind == Failed {
		return Event{Action: ActFail, Path: o.Path, Err: o.Err}
	}
	ev := Event{Action: o.Action, Path: o.Path, Size: o.Size, Sum: o.Sum}
	switch {
	case o.LinkCopy:
		ev.Action = ActLinkCopy
	case ev.Action == ActLinkDest:
		ev.Sum = verify.Sum{} // not among the actions Event.Sum is given for
	}
	return ev
}
