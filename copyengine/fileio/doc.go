// Package fileio is the only package of fastcopy that makes system calls
// directly. It offers directory handles and file handles whose operations are
// relative to an open directory, so that the engine never resolves a path
// through a symlink it did not mean to follow:
//
//   - Dir.OpenBeneath opens a directory below a root without following any
//     symlink on the way (openat2 with RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH on
//     Linux, a component-by-component O_NOFOLLOW walk elsewhere).
//   - Dir.CreateTemp creates a file with O_CREAT|O_EXCL|O_NOFOLLOW and mode
//     0600, so that an existing file, symlink or hard link at that name is
//     never opened or written through.
//   - File offers the data-path primitives: FICLONE, copy_file_range,
//     SEEK_DATA/SEEK_HOLE, posix_fadvise and syncfs where the platform has
//     them, each returning ErrUnsupported where it does not.
//
// Platform code sits in files named by suffix: _linux.go for Linux-only
// primitives, _unix.go for what all Unix systems share, _windows.go for a
// path-based fallback with the same contract.
//
// Built with the tag fcfault, the package consults a fault injector before
// each operation (see fault_on.go); the shipped binary carries no such hook.
package fileio
