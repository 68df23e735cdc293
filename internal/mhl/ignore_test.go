package mhl

import "testing"

func TestIgnore(t *testing.T) {
	ig, err := NewIgnore(append(append([]string{}, DefaultIgnore...),
		"*.tmp", "/Cache/", "docs/**/*.bak", "!keep.tmp", "# a comment", "", "thumb?.db", "[Tt]rash", "**/logs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rel   string
		isDir bool
		want  bool
	}{
		{".DS_Store", false, true},
		{"A/.DS_Store", false, true},
		{"A/ascmhl/0001_A_2020-01-01_000000Z.mhl", false, true},
		{"ascmhl", true, true},
		{"clip.mov", false, false},
		{"a/b/x.tmp", false, true},
		{"a/keep.tmp", false, false},
		{"Cache", true, true},
		{"Cache/x", false, true},
		{"A/Cache/x", false, false},
		{"Cache", false, false},
		{"docs/x.bak", false, true},
		{"docs/a/b/x.bak", false, true},
		{"x.bak", false, false},
		{"thumb1.db", false, true},
		{"thumb12.db", false, false},
		{"Trash/f", false, true},
		{"trash", false, true},
		{"a/b/logs/x", false, true},
	} {
		if got := ig.Ignored(tc.rel, tc.isDir); got != tc.want {
			t.Errorf("Ignored(%q, %v) = %v, want %v", tc.rel, tc.isDir, got, tc.want)
		}
	}
}
