//go:build fcfault

package copyengine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
)

// TestTempproofResumeNotUserFile: a run is cut while it writes a large
// file and keeps its temporary; then the user's own file takes the
// temporary's name (same size, the source's first bytes, so that a resume
// would take it up). The rerun must neither write into it nor rename it
// onto the file: it is not the inode the record names. The file is copied
// whole under another temporary, and the user's file stays as it was.
func TestTempproofResumeNotUserFile(t *testing.T) {
	t.Parallel()
	scr := scratchDir(t)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	tmp, data := interruptedCopy(t, src, dst, 16)
	st, err := os.Stat(tmp)
	if err != nil {
		t.Fatal(err)
	}
	user := append([]byte(nil), data[:st.Size()]...)
	user[len(user)-1] ^= 0xff // the user's: not the copy's last byte
	mine := filepath.Join(scr, "mine")
	writeFile(t, mine, user)
	noErr(t, os.Rename(mine, tmp)) // another inode under the temporary's name
	_, _, at := resumeRun(t, src, dst, nil)
	if at >= 0 {
		t.Errorf("the rerun took the user's file for its kept temporary and resumed at %d", at)
	}
	sameContent(t, filepath.Join(dst, "sub", "big"), data)
	sameContent(t, tmp, user)
}

// TestTempproofResumeSourceNamedLikeTemp, on every destination: after a
// cut run kept the temporary of sub/big, a source that holds a file named
// like that temporary is copied there. The copy replaces the leftover and
// is the user's from then on: a later run, whose source lacks it, must
// neither take it up as big's temporary nor remove it.
func TestTempproofResumeSourceNamedLikeTemp(t *testing.T) {
	tempproofDests(t, func(t *testing.T, dst string) {
		src := scratchDir(t)
		tmp, data := interruptedCopy(t, src, dst, 16)
		user := []byte("a file of the user's, named like a temporary\n")
		src2 := scratchDir(t)
		writeFile(t, filepath.Join(src2, "sub", filepath.Base(tmp)), user)
		tempproofRun(t, resumeOpts(copyengine.Options{Sources: []string{src2 + "/"}, Dest: dst}))
		sameContent(t, tmp, user)
		_, _, at := resumeRun(t, src, dst, nil)
		if at >= 0 {
			t.Errorf("the rerun took the copy of a source file for its kept temporary and resumed at %d", at)
		}
		sameContent(t, filepath.Join(dst, "sub", "big"), data)
		sameContent(t, tmp, user)
	})
}
