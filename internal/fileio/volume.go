package fileio

import (
	"encoding/binary"
	"fmt"
)

// VolumeID is what IdentifyVolume found out about the volume of a
// directory, before the hash cache digests it into its own identity.
type VolumeID struct {
	Dev uint64 // st_dev of the directory asked about
	// ID is what identifies the volume: "uuid:<magic>:<hex>",
	// "fsid:<magic>:<hex>" or "serial:<magic>:<serial as blkid spells
	// it>", the magic being the statfs f_type in hex. Empty when no
	// identity could be had.
	ID string
	// Why says, when ID is empty, why no identity could be had.
	Why string
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
