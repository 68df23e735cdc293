package fileio

import (
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"
)

// IdentifyVolume finds what identifies the volume holding the directory
// path: the serial number that formatting gave it and its filesystem's
// name, from GetVolumeInformation of the volume's root
// ("serial:<filesystem>:<serial>", e.g. "serial:NTFS:1A2B3C4D"), where a
// Linux volume's ID has the statfs magic. The serial follows the volume
// from one drive letter, mount point or machine to another and changes
// when it is formatted again; the volume GUID is not used, since Windows
// gives a volume one per machine. Dev is the serial too, as Stat reports
// it. A volume with no serial (0) has no identity.
func IdentifyVolume(path string) (VolumeID, error) {
	root, serial, fsName, err := volumeInfo(path)
	if err != nil {
		return VolumeID{}, err
	}
	v := VolumeID{Dev: uint64(serial)}
	if serial == 0 {
		v.Why = fmt.Sprintf("the volume %s has no serial number", root)
		return v, nil
	}
	v.ID = fmt.Sprintf("serial:%s:%08X", strings.ToUpper(fsName), serial)
	return v, nil
}

// volumeInfo is GetVolumeInformation of the root of the volume holding
// path: that root, the volume's serial number and its filesystem's name
// ("NTFS", "exFAT", "FAT32", "ReFS", ...).
func volumeInfo(path string) (root string, serial uint32, fsName string, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", 0, "", err
	}
	p, err := windows.UTF16PtrFromString(sysPath(abs))
	if err != nil {
		return "", 0, "", err
	}
	r := make([]uint16, windows.MAX_LONG_PATH)
	if err := windows.GetVolumePathName(p, &r[0], uint32(len(r))); err != nil {
		return "", 0, "", pathErr("GetVolumePathName", path, err)
	}
	var maxName, flags uint32
	name := make([]uint16, windows.MAX_PATH+1)
	if err := windows.GetVolumeInformation(&r[0], nil, 0, &serial, &maxName, &flags, &name[0], uint32(len(name))); err != nil {
		return "", 0, "", pathErr("GetVolumeInformation", windows.UTF16ToString(r), err)
	}
	return windows.UTF16ToString(r), serial, windows.UTF16ToString(name), nil
}
