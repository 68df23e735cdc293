//go:build !linux

package copyengine_test

import "errors"

// errWindowsNoXattr: this system's files carry no extended attributes the
// tests can set; a test that needs one skips, saying so.
var errWindowsNoXattr = errors.New("no extended attributes on this system")

func windowsSetxattr(path, name string, value []byte) error { return errWindowsNoXattr }

func windowsGetxattr(path, name string, buf []byte) (int, error) { return 0, errWindowsNoXattr }
