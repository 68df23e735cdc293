//go:build unix && !linux

package fileio

// Inherit reports that what a new file gets is not told here (inherited
// ACLs on darwin and FreeBSD are not looked at): the caller sets every
// attribute itself.
func (d *Dir) Inherit() Inherited { return Inherited{} }

// Umask reports that the umask is not read here.
func Umask() (uint32, bool) { return 0, false }
