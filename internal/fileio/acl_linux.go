package fileio

import "strings"

// The extended attributes that hold a file's POSIX ACLs. The owner of a
// file may set them without privileges, as cp -a does.
const (
	aclAccess  = "system.posix_acl_access"
	aclDefault = "system.posix_acl_default"
)

// unprivileged reports whether the attribute name is one a process without
// privileges may set on a file it owns: the user namespace and the POSIX
// ACLs. The trusted and security namespaces (and capabilities) need root.
func unprivileged(name string) bool {
	return strings.HasPrefix(name, "user.") || name == aclAccess || name == aclDefault
}
