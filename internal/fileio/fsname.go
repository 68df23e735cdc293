package fileio

// bootKind names the filesystem whose first sector is b, as people call it:
// "exFAT", "NTFS", "FAT32", "FAT"; "" for anything else.
func bootKind(b []byte) string {
	switch {
	case len(b) < 512:
		return ""
	case string(b[3:11]) == "NTFS    ":
		return "NTFS"
	case string(b[3:11]) == "EXFAT   ":
		return "exFAT"
	case b[510] != 0x55 || b[511] != 0xAA:
		return ""
	case string(b[0x52:0x5a]) == "FAT32   ":
		return "FAT32"
	case string(b[0x36:0x39]) == "FAT":
		return "FAT"
	}
	return ""
}

// fsKindOf names a filesystem type as FSType spells it the way people call
// it, "" when it has no better name than its type.
func fsKindOf(fsType string) string {
	switch fsType {
	case "vfat", "msdos", "fuse.fusefat":
		return "FAT"
	case "exfat", "fuse.exfat":
		return "exFAT"
	case "ntfs", "ntfs3", "fuse.ntfs", "fuse.ntfs-3g":
		return "NTFS"
	}
	return ""
}
