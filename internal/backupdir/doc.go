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
// DEST or a source is refused) before anything is written: the directory
// as given, DEST and the directory source roots, the dry run's gate, and
// what it needs of the run (the kernel's resolution of a path, the
// identity overlap test, temporary names, read buffers, whether DEST's
// inode numbers hold, whether a lost mode is the filesystem's). Open
// refuses or makes and opens the directory; Dir.Preserve and
// Dir.BeforeReplace keep a version and report it through Config.Kept,
// which copyengine's backups (backupdir.go) counts and emits as a backup
// event. It makes no other report and imports nothing of the copy engine.
package backupdir
