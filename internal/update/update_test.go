package update

import (
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

func TestKeeps(t *testing.T) {
	file := func(mtime int64) *fileio.Stat { return &fileio.Stat{Mode: fileio.ModeRegular | 0o644, Mtime: mtime} }
	dir := &fileio.Stat{Mode: fileio.ModeDir | 0o755}
	u, ie := Config{Update: true}, Config{IgnoreExisting: true}
	for _, c := range []struct {
		name     string
		c        Config
		src, dst *fileio.Stat
		gran     int64
		want     bool
	}{
		{"no destination", ie, file(1), nil, 1, false},
		{"a directory", ie, dir, dir, 1, false},
		{"ignore-existing", ie, file(5), file(1), 1, true},
		{"update, newer", u, file(1), file(5), 1, true},
		{"update, older", u, file(5), file(1), 1, false},
		{"update, equal", u, file(5), file(5), 1, false},
		{"update, newer only below the granularity", u, file(2_000_000_001), file(2_000_000_900), 1_000_000_000, false},
		{"update, before 1970", u, file(-1_500_000_000), file(-900_000_000), 1_000_000_000, true},
		{"update, not a regular file", u, dir, file(5), 1, false},
		{"neither", Config{}, file(1), file(5), 1, false},
	} {
		if got := c.c.Keeps(c.src, c.dst, c.gran); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
