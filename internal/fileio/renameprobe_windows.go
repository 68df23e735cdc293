package fileio

import "errors"

// ErrRenameLoses is returned by ProbeDirRename when a file was not found,
// whole, in its directory after the directory was renamed.
var ErrRenameLoses = errors.New("a renamed directory lost the file written in it")

// ProbeDirRename is not used on Windows (CanStageDirs is false).
func ProbeDirRename(d *Dir, a, b string, content []byte) error { return ErrUnsupported }
