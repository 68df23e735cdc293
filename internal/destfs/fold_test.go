package destfs_test

import (
	"testing"

	"github.com/fastcopy/fastcopy/internal/destfs"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

func TestRespelled(t *testing.T) {
	reg := func(size int64) *fileio.Stat { return &fileio.Stat{Mode: fileio.ModeRegular | 0o644, Size: size} }
	link := &fileio.Stat{Mode: fileio.ModeSymlink | 0o777}
	target := func(t string) func() (string, error) { return func() (string, error) { return t, nil } }
	for _, c := range []struct {
		name     string
		src, dst *fileio.Stat
		readlink func() (string, error)
		want     destfs.Held
	}{
		{"same size", reg(5), reg(5), nil, destfs.HeldContested},
		{"other size", reg(5), reg(6), nil, destfs.HeldOther},
		{"empty onto empty", reg(0), reg(0), nil, destfs.HeldSame},
		{"other type", reg(0), link, nil, destfs.HeldOther},
		{"same target", link, link, target("t"), destfs.HeldSame},
		{"other target", link, link, target("u"), destfs.HeldOther},
	} {
		if got := destfs.Respelled(c.src, c.dst, "t", c.readlink); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
