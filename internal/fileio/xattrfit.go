package fileio

import "errors"

// ErrXattrTooLarge is wrapped by the error of an extended attribute the
// destination's filesystem refused for its size, not for want of space:
// more than it keeps for one entry (ext4 without the ea_inode feature
// keeps an entry's attributes in one block, 4 KiB at most; btrfs in one
// metadata leaf, about 16 KiB), or a name or value beyond its limits. The
// copy lacks that attribute; its other attributes are still set. Such an
// error does not satisfy IsNoSpace, whatever setxattr answered.
var ErrXattrTooLarge = errors.New("more than the filesystem keeps in one entry's attributes")
