// Package follower keeps a source's hard links in the copy: each further
// name of a source inode (a follower) becomes a hard link to the copy of
// its first name (the leader), once that copy is in place.
//
// Its input is Config (opening a destination directory, the clearing of a
// leftover temporary, the run's record of what it makes, the keeping of
// what a name holds before it is replaced) and, per follower, a Name: its
// path, its leader's path, the leader's inode as verified and where the
// leader's copy stands (Leader: a follower of a leader not in place fails).
// Link answers whether it linked the name or found it linked already, or
// why it could not; the caller reports the outcome. Would is the same
// judgement for a dry run, which writes nothing.
//
// Its guarantee: a name is linked only to the inode that was verified
// (or, where none was, to the one the leader's name holds when it is
// looked at): the leader's name must still lead to it, the link is made
// under a temporary name and checked to lead to it before it takes the
// follower's name (linkdest.LinkChecked), and the name is checked again
// after the rename. A name that leads elsewhere is a refusal.Mismatch,
// never a link to content nobody verified.
package follower
