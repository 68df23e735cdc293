//go:build !linux

package fileio

// CaseFoldAttr reports whether d carries a per-directory case-folding
// attribute; only Linux has one (chattr +F).
func CaseFoldAttr(d *Dir) bool { return false }
