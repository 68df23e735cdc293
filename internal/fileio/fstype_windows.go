package fileio

// FSType names the filesystem holding path by what GetVolumeInformation
// says, in the words the rest of fastcopy knows: FAT12/16/32 as "vfat"
// and exFAT as "exfat" (no hard links; FAT's 4 GiB limit; their policies
// in hashcache.PolicyFor), and NTFS as "NTFS", which differs from the
// Linux drivers' "ntfs" and "ntfs3": Windows' own driver keeps a change
// time and stable file IDs, which the hash cache can check (PolicyFor).
// Others (ReFS, a network share's) keep their own names, which PolicyFor
// treats as unknown.
func FSType(path string) (string, error) {
	_, _, name, err := volumeInfo(path)
	if err != nil {
		return "", err
	}
	switch name {
	case "FAT", "FAT12", "FAT16", "FAT32":
		return "vfat", nil
	case "exFAT":
		return "exfat", nil
	}
	return name, nil
}
