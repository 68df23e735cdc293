// Package preflight is what a run decides and refuses before it writes
// anything: the plan (which SOURCE lands where, what DEST will be: Make,
// from Config), the overlap checks that keep a destination out of its
// sources and the records a run writes out of its destination, by
// identity rather than by name (Inside, Same, In; the case-folding rule
// for filesystems whose inode numbers name no file), and the check that a
// copy can fit on its destination (CheckSpace, from SpaceConfig). It
// returns facts (a *Plan, true or false) and refusals (refusal.Error,
// each with the path, what is wrong and what to do); it changes nothing.
//
// Make takes the arguments as given (Config: the SOURCEs and DEST) and
// makes the Plan: DEST's root, whether it is to be made, whether one file
// lands on DEST's own name, and each SOURCE's directory, name and place
// below DEST. It stats and opens, and creates nothing. The overlap checks
// (Inside, Same, In, and ArgPath, the kernel's resolution of a path the
// user gave) are the ones every other pass asks (--backup-dir, --delete's
// guards, --manifest, the --also destinations), so one rule decides
// overlaps for all of them; Apart refuses two destinations of one run
// that are one directory or one inside the other (other spellings on a
// drive that folds names, bind mounts). CheckSpace takes what it needs of the run as
// SpaceConfig: the plan's roots, how the run opens a root, its filters,
// -L, whether dedup may share, which files resume a kept temporary, and
// the destination's largest file.
//
// CheckOptions takes a run's option values as Options (the modes, the
// numbers, the paths as given), sets each mode left empty to its default
// and refuses a mode no flag knows (--reflink's own type, Reflink, is
// here), a combination the run cannot carry out (--dedup=clone with
// --reflink=never), a negative --jobs or --bwlimit and an empty path;
// CheckOrder refuses an --order no read order knows (internal/jobs picks
// the number of copy workers). CheckDests refuses
// the destinations of one run that are not apart, or whose manifests are
// one file or lie inside another destination.
package preflight
