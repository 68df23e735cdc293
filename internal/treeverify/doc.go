// Package treeverify compares directory trees by content, the work of
// `fastcopy verify`: a source tree against its copy (CompareTrees), a tree
// against a manifest (CheckManifest), or against a record in any format of
// internal/digest (CheckDigests: every format a file is listed with
// computed in one read of it), and it hashes a list of files into
// manifest entries (HashFiles).
//
// Its contract:
//
//   - Every regular file is hashed with verify's xxh128 (or, for
//     CheckDigests, in the formats its record names) over its whole
//     logical content, holes read as zeros; a copy is never judged by size
//     or times alone. A digest is taken without reading only where the
//     caller's TreeOptions.Known vouches for the file as it is (a valid hash
//     cache entry).
//   - Nothing is written and no symlink is followed: both trees are walked
//     and their files opened through directory descriptors (internal/fileio),
//     beneath the roots given.
//   - The checked side is read from its device (its cached pages dropped
//     first) unless TreeOptions.FromCache is set.
//   - A destination that folds names (exFAT, NTFS, ext4 casefold, APFS) is
//     paired with its source the way the copy placed the files: a source name
//     the destination holds under another spelling is that entry, and a
//     source name that is one name with another there is reported missing,
//     naming the other.
//   - Differences are returned in a Report sorted by path; a file that
//     cannot be read is a difference of kind Failed, not an error. An error
//     is returned only when a tree cannot be walked or ctx is done.
//
// It imports verify, internal/digest, internal/fileio and internal/namefold
// of the project.
package treeverify
