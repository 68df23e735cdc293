package fileio

import "path/filepath"

// Answers reports whether the filesystem holding d still answers (a stat
// of d's path: a Dir here is a path).
func Answers(d *Dir) error {
	_, err := d.Stat()
	return err
}

// StatPath returns the metadata of path, following symlinks.
func StatPath(path string) (Stat, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Stat{}, pathErr("stat", path, err)
	}
	st, err := statPath(sysPath(abs), true)
	if err != nil {
		return Stat{}, pathErr("stat", path, err)
	}
	return st, nil
}
