package records

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fastcopy/fastcopy/verify"
)

// Manifest is where and how a run writes its manifest (--manifest).
type Manifest struct {
	Path   string // the manifest file
	Format string // its digests' format (xxh128, sha256, ...)
	NoSync bool   // not flushed before it takes its name
	// TempSuffix ends the name of the temporary it is written under
	// beside Path, so that a later run knows it for one of its own.
	TempSuffix string
}

// Write writes the manifest of the files in s atomically: a temporary
// beside it, flushed, renamed onto its name. Its lines are in Format:
// xxhsum -H2 for xxh128, else the line format of the coreutils tool of
// that format (sha256sum, md5sum, b3sum), which is the same "<hex>
// <path>" with the same escaping, sorted by path; a path listed twice is
// listed with its last digest. The files without a digest in Format are
// left out and returned.
func (m *Manifest) Write(s *Set) ([]Failure, error) {
	f, err := os.CreateTemp(Dir(m.Path), "."+filepath.Base(m.Path)+".*"+m.TempSuffix)
	if err != nil {
		return nil, fmt.Errorf("writing manifest: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	lines, failed := s.Lines(m.Format)
	err = verify.WriteDigests(f, lines)
	if err == nil && !m.NoSync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, m.Path)
	}
	if err != nil {
		return failed, fmt.Errorf("writing manifest %q: %w", m.Path, err)
	}
	return failed, nil
}

// Dir is the directory a manifest path names, cut at its last separator
// without cleaning: "a/link/../m" is in "a/link/..", which the kernel
// resolves through the link's target, as it does when the manifest is
// renamed onto its name.
func Dir(p string) string {
	i := strings.LastIndexByte(p, filepath.Separator)
	switch {
	case i < 0:
		return "."
	case i == 0:
		return string(filepath.Separator)
	}
	return p[:i]
}
