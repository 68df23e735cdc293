package copyengine_test

import "syscall"

// windowsSetxattr and windowsGetxattr are the extended-attribute calls of
// tests that build for Windows too, where a file has no such attributes.
func windowsSetxattr(path, name string, value []byte) error {
	return syscall.Setxattr(path, name, value, 0)
}

func windowsGetxattr(path, name string, buf []byte) (int, error) {
	return syscall.Getxattr(path, name, buf)
}
