package fileio

// Answers reports whether the filesystem holding d still answers (a stat
// of d's handle).
func (d *Dir) Answers() error {
	_, err := d.Stat()
	return err
}

// StatPath returns the metadata of path, following symlinks.
func StatPath(path string) (Stat, error) { return statPath(path, true) }
