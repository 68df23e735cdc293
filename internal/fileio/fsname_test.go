package fileio

import "testing"

// TestBootKind names the filesystem of a boot sector as messages do.
func TestBootKind(t *testing.T) {
	t.Parallel()
	sector := func(f func(b []byte)) []byte {
		b := make([]byte, 512)
		f(b)
		return b
	}
	fatSig := func(b []byte) { b[510], b[511] = 0x55, 0xAA }
	for _, tt := range []struct {
		b    []byte
		want string
	}{
		{sector(func(b []byte) { copy(b[3:], "NTFS    ") }), "NTFS"},
		{sector(func(b []byte) { copy(b[3:], "EXFAT   ") }), "exFAT"},
		{sector(func(b []byte) { fatSig(b); copy(b[0x52:], "FAT32   ") }), "FAT32"},
		{sector(func(b []byte) { fatSig(b); copy(b[0x36:], "FAT16   ") }), "FAT"},
		{sector(func(b []byte) { copy(b[0x52:], "FAT32   ") }), ""}, // no boot signature
		{make([]byte, 100), ""},
	} {
		if got := bootKind(tt.b); got != tt.want {
			t.Errorf("bootKind of a %q sector = %q", tt.want, got)
		}
	}
}
