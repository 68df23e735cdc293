// Package backupdir is --backup-dir: the old version of each file that
// --delete removes or a copy replaces is kept in a directory of the
// user's, under its path relative to the destination, instead of being
// removed. On DEST's filesystem it is a hard link made before the name is
// removed or replaced; elsewhere, or where that filesystem has no hard
// links (exFAT, FAT), a copy, flushed and read back, made before. Either
// way, at every instant each version exists complete under some name
// (docs/design.md, Mirror and verified move).
//
// Its input is Config, which Open checks (a backup directory that overlaps
// DEST or a source is refused) before anything is written. What it keeps
// it reports through Config.Kept; it makes no other report and imports
// nothing of the copy engine.
package backupdir
