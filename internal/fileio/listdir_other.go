//go:build unix && !linux

package fileio

import "os"

// listDir reads the directory open at fd and closes it. The inode numbers
// are not kept here (Ino 0): only Linux's listing is read for them.
func listDir(fd int, path string) ([]DirEntry, error) {
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, pathErr("readdir", path, err)
	}
	out := make([]DirEntry, 0, len(des))
	for _, de := range des {
		var t uint32
		switch de.Type() {
		case 0:
			t = ModeRegular
		case os.ModeDir:
			t = ModeDir
		case os.ModeSymlink:
			t = ModeSymlink
		case os.ModeNamedPipe:
			t = ModeFIFO
		case os.ModeSocket:
			t = ModeSocket
		case os.ModeDevice:
			t = ModeBlock
		case os.ModeDevice | os.ModeCharDevice:
			t = ModeChar
		}
		out = append(out, DirEntry{Name: de.Name(), Type: t})
	}
	return out, nil
}
