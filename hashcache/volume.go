package hashcache

import (
	"encoding/binary"
	"fmt"

	"github.com/zeebo/xxh3"
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

func identified(dev uint64, id string) VolumeInfo {
	v := Volume(xxh3.HashString(id))
	if v == 0 {
		v = 1
	}
	return VolumeInfo{Volume: v, Dev: dev, ID: id}
}

// bootSerial reads the volume serial number from the first sector of an
// NTFS, exFAT or FAT volume, spelled as blkid spells the UUID of such a
// volume ("0123456789ABCDEF" for NTFS, "0123-4567" for the others), so that
// the serial read from the device and the name of its /dev/disk/by-uuid link
// agree. It reports false for anything else.
func bootSerial(b []byte) (string, bool) {
	if len(b) < 512 {
		return "", false
	}
	fat := func(v uint32) string { return fmt.Sprintf("%04X-%04X", v>>16, v&0xffff) }
	switch {
	case string(b[3:11]) == "NTFS    ":
		return fmt.Sprintf("%016X", binary.LittleEndian.Uint64(b[0x48:])), true
	case string(b[3:11]) == "EXFAT   ":
		return fat(binary.LittleEndian.Uint32(b[0x64:])), true
	case b[510] != 0x55 || b[511] != 0xAA:
		return "", false
	case string(b[0x52:0x5a]) == "FAT32   " && (b[0x42] == 0x29 || b[0x42] == 0x28):
		return fat(binary.LittleEndian.Uint32(b[0x43:])), true
	case (b[0x26] == 0x29 || b[0x26] == 0x28) && string(b[0x36:0x39]) == "FAT":
		return fat(binary.LittleEndian.Uint32(b[0x27:])), true
	}
	return "", false
}
