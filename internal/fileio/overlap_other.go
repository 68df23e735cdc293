//go:build !linux

package fileio

// Within reports whether the directory a is the directory b or lies below
// it, by identity: it walks up from a as the platform resolves "..".
// Only Linux tells a bind mount's place in its own filesystem.
func Within(a, b *Dir) (bool, error) {
	bst, err := b.Stat()
	if err != nil {
		return false, err
	}
	d, err := a.OpenSub(".")
	if err != nil {
		return false, err
	}
	for i := 0; i < 1<<12; i++ {
		st, err := d.Stat()
		if err != nil {
			break
		}
		if st.Dev == bst.Dev && st.Ino == bst.Ino {
			d.Close()
			return true, nil
		}
		up, err := d.Parent()
		if err != nil {
			break
		}
		ust, err := up.Stat()
		d.Close()
		d = up
		if err != nil || (ust.Dev == st.Dev && ust.Ino == st.Ino) {
			break
		}
	}
	d.Close()
	return false, nil
}
