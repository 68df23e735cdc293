package move

import (
	"errors"
	"fmt"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// ErrMoveIncomplete is returned by Run (wrapped in a *MoveIncompleteError)
// when --move kept sources because the destination could not keep their
// extended attributes or ACLs: every copy is in place, but the move is
// not done. It counts as ErrSomeFailed (exit 3).
var ErrMoveIncomplete = errors.New("--move incomplete")

// MoveIncompleteError says how many sources --move kept because the
// destination could not keep their extended attributes or ACLs.
type MoveIncompleteError struct{ Kept int64 }

func (e *MoveIncompleteError) Error() string {
	return fmt.Sprintf("--move incomplete: %d sources kept in place, because the destination could not keep their extended attributes or ACLs (see the warnings); move them to a filesystem that keeps them, or remove the attributes and rerun", e.Kept)
}

// Is makes a move left incomplete an ErrMoveIncomplete and an
// ErrSomeFailed.
func (e *MoveIncompleteError) Is(target error) bool {
	return target == ErrMoveIncomplete || target == refusal.ErrSomeFailed
}

// Incomplete returns the error of a move whose Finish kept sources for
// their metadata, or nil.
func (j *Journal) Incomplete() error {
	if j == nil {
		return nil
	}
	var n int64
	for _, c := range j.metaKept {
		n += c
	}
	if n == 0 {
		return nil
	}
	return &MoveIncompleteError{Kept: n}
}

// Result is what Finish kept in place, for the run's summary.
type Result struct {
	// Xattrs and ACLs count the sources kept because the destination
	// could not keep their extended attributes, their ACLs.
	Xattrs, ACLs int64
	// Left counts the sources left in place because -u or
	// --ignore-existing kept their DEST file.
	Left int64
}

func (j *Journal) result() Result {
	return Result{Xattrs: j.metaKept[lostXattrs], ACLs: j.metaKept[lostACLs], Left: j.left}
}

// Kept is how many sources were kept in place, for every reason.
func (r Result) Kept() int64 { return r.Xattrs + r.ACLs + r.Left }

// Lines says, once per reason, why sources were kept in place; destFS
// names the destination's filesystem.
func (r Result) Lines(destFS string) []string {
	var out []string
	for _, k := range []struct {
		n    int64
		kind string
	}{{r.Xattrs, lostXattrs}, {r.ACLs, lostACLs}} {
		if k.n > 0 {
			out = append(out, fmt.Sprintf("%d sources kept in place: %s cannot keep their %s, which removing them would lose", k.n, destFS, k.kind))
		}
	}
	if r.Left > 0 {
		out = append(out, fmt.Sprintf("%d sources kept in place, not moved: their files in DEST were left as they are (-u: newer there, or --ignore-existing)", r.Left))
	}
	return out
}

// SameDirAsSource returns an error when the destination directory dd is
// the source directory sd itself (the same (st_dev, st_ino): the source
// bind-mounted inside DEST): what it holds would be found "unchanged" by
// being the source, and --move would remove the only copy. Such a
// directory is not copied into, in any run.
func SameDirAsSource(sd, dd *fileio.Dir) error {
	sst, err := sd.Stat()
	if err != nil {
		return nil
	}
	dst, err := dd.Stat()
	if err != nil || dst.Ino == 0 || dst.Dev != sst.Dev || dst.Ino != sst.Ino {
		return nil
	}
	return fmt.Errorf("the destination directory is the source directory %q itself (mounted inside the destination?); nothing in it copied or moved (unmount it, or copy into another directory)", sd.Path())
}

// CheckFlags refuses --move where it could remove a source that was not
// what the copy holds: with -L (dereference: it would remove files the
// source's symlinks lead to), and without a read-back (verified false:
// --verify=off).
func CheckFlags(dereference, verified bool) error {
	if dereference {
		return &refusal.Error{Msg: "--move cannot be used with -L: it would remove files the source's symlinks lead to", Hint: "leave -L out"}
	}
	if !verified {
		return &refusal.Error{Msg: "--move removes a source only once its copy is verified, which --verify=off forbids", Hint: "use --verify=device (the default) or --verify=cache"}
	}
	return nil
}
