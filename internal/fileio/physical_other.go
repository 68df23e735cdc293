//go:build !linux

package fileio

// PhysicalStart reports the place of the file's data as unknown: only
// Linux has FIEMAP here.
func (f *File) PhysicalStart() (off int64, ok bool) { return 0, false }

// PhysicalStart reports the place of the file's data as unknown: only
// Linux has FIEMAP here.
func PhysicalStart(d *Dir, name string) (off int64, ok bool) { return 0, false }
