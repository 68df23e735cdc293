package fileio

import (
	"encoding/binary"
	"testing"
)

func TestBootSerial(t *testing.T) {
	t.Parallel()
	sector := func(f func(b []byte)) []byte {
		b := make([]byte, 512)
		f(b)
		return b
	}
	fatSig := func(b []byte) { b[510], b[511] = 0x55, 0xAA }
	tests := []struct {
		name string
		b    []byte
		want string
		ok   bool
	}{
		{"ntfs", sector(func(b []byte) {
			copy(b[3:], "NTFS    ")
			binary.LittleEndian.PutUint64(b[0x48:], 0x0D3624AA12943392)
		}), "0D3624AA12943392", true},
		{"exfat", sector(func(b []byte) {
			copy(b[3:], "EXFAT   ")
			binary.LittleEndian.PutUint32(b[0x64:], 0xEFAFEA78)
		}), "EFAF-EA78", true},
		{"fat32", sector(func(b []byte) {
			fatSig(b)
			copy(b[0x52:], "FAT32   ")
			b[0x42] = 0x29
			binary.LittleEndian.PutUint32(b[0x43:], 0x1234ABCD)
		}), "1234-ABCD", true},
		{"fat16", sector(func(b []byte) {
			fatSig(b)
			copy(b[0x36:], "FAT16   ")
			b[0x26] = 0x29
			binary.LittleEndian.PutUint32(b[0x27:], 0x00C0FFEE)
		}), "00C0-FFEE", true},
		{"fat without boot signature", sector(func(b []byte) {
			copy(b[0x36:], "FAT16   ")
			b[0x26] = 0x29
		}), "", false},
		{"fat without extended signature", sector(func(b []byte) {
			fatSig(b)
			copy(b[0x36:], "FAT16   ")
		}), "", false},
		{"zeros", make([]byte, 512), "", false},
		{"short", []byte("NTFS"), "", false},
	}
	for _, tt := range tests {
		got, ok := bootSerial(tt.b)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: bootSerial = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}
