package copyengine_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// tempproofRecordKept writes the record an interrupted run leaves in the
// destination root dst, naming the files rels (below dst) as temporaries
// it made and kept, without their inode numbers (as when the lines that
// give them were lost): for tests that make such a temporary by hand.
func tempproofRecordKept(t *testing.T, dst string, rels ...string) {
	t.Helper()
	b := []byte("fastcopy-made 1\n")
	for _, rel := range rels {
		b = append(b, "+ f 0 "+strconv.Quote(rel)+"\n"...)
	}
	if err := os.WriteFile(filepath.Join(dst, madeRecordName), b, 0o600); err != nil {
		t.Fatal(err)
	}
}
