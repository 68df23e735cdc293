package hashcache

import (
	"github.com/zeebo/xxh3"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// Volume identifies a filesystem volume: a 64-bit digest of its UUID or
// serial number, or of the kernel's f_fsid where that is derived from one.
// Zero means that no identity could be established; no entry is valid for
// a file on such a volume (see Entry.Valid).
type Volume uint64

// VolumeInfo is what Identify found out about the volume of a directory.
type VolumeInfo struct {
	Volume Volume // zero: no identity
	Dev    uint64 // st_dev of the directory asked about
	// ID is what the identity is made from, before it is digested:
	// "uuid:<magic>:<hex>", "fsid:<magic>:<hex>" or
	// "serial:<magic>:<serial as blkid spells it>", the magic being the
	// statfs f_type in hex. Empty when Volume is zero.
	ID string
	// Why says, when Volume is zero, why no identity could be had.
	Why string
}

// Identify finds the identity of the volume holding the directory path:
// what fileio.IdentifyVolume reads from the filesystem (see there for how,
// filesystem by filesystem), digested into a Volume.
func Identify(path string) (VolumeInfo, error) {
	v, err := fileio.IdentifyVolume(path)
	if err != nil {
		return VolumeInfo{}, err
	}
	if v.ID == "" {
		return VolumeInfo{Dev: v.Dev, Why: v.Why}, nil
	}
	return identified(v.Dev, v.ID), nil
}

func identified(dev uint64, id string) VolumeInfo {
	v := Volume(xxh3.HashString(id))
	if v == 0 {
		v = 1
	}
	return VolumeInfo{Volume: v, Dev: dev, ID: id}
}
