// Package destdir makes the destination's directories as the walk reaches
// them: Ensure makes one (owner-only until its metadata is set, after its
// contents) or finds the directory a previous run made, and Writable lets
// the owner write in one that a previous run left read-only.
//
// Its input is the parent directory (a descriptor: nothing is looked up
// through a symlink), the name and, for the wording of a refusal, the
// source directory's path; its answer is whether the directory was
// created here, and its error. It guarantees that a name in DEST that is
// not a directory is never written into or replaced as one: it is
// refused, naming its type. The caller counts, reports and records.
package destdir
