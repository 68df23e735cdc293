package records

import (
	"fmt"
	"sync"

	"github.com/fastcopy/fastcopy/verify"
)

// XXH128 is the copy's own format, which verify.Sum holds.
const XXH128 = "xxh128"

// Listed is one file a run lists in its records: its path below DEST,
// its xxh128 and its digests in the other formats asked for.
type Listed struct {
	Path  string
	Sum   verify.Sum
	Extra map[string]string
}

// Digest returns l's digest in the format named, as records write it.
func (l *Listed) Digest(format string) (string, bool) {
	if format == XXH128 {
		return verify.Hex(l.Sum), true
	}
	v, ok := l.Extra[format]
	return v, ok
}

// Set is the files a run lists, in the order they were added; a path
// added twice counts with its last digests. Add may be called from any
// goroutine.
type Set struct {
	mu   sync.Mutex
	list []Listed
}

// Add lists a file.
func (s *Set) Add(l Listed) {
	s.mu.Lock()
	s.list = append(s.list, l)
	s.mu.Unlock()
}

// last is each path listed, with the last digests added for it.
func (s *Set) last() map[string]Listed {
	s.mu.Lock()
	defer s.mu.Unlock()
	last := make(map[string]Listed, len(s.list))
	for _, m := range s.list {
		last[m.Path] = m
	}
	return last
}

// Lines is each path listed with its digest in format (unsorted; the
// last digest added for a path counts). A path without a digest in that
// format is left out and returned among the failures.
func (s *Set) Lines(format string) ([]verify.DigestLine, []Failure) {
	last := s.last()
	var failed []Failure
	lines := make([]verify.DigestLine, 0, len(last))
	for _, m := range last {
		d, ok := m.Digest(format)
		if !ok {
			failed = append(failed, Failure{Path: m.Path, Err: ErrNoDigest(format)})
			continue
		}
		lines = append(lines, verify.DigestLine{Digest: d, Path: m.Path})
	}
	return lines, failed
}

// Failure is a file a record could not list as it should, and why: the
// engine fails it by name; the run goes on.
type Failure struct {
	Path string
	Err  error
}

// ErrNoDigest is the failure of a file whose digest in a format a record
// needs the run does not have (it was neither read nor vouched for with
// it): the record is written without it, and a rerun reads it.
func ErrNoDigest(format string) error {
	return fmt.Errorf("no %s digest of the source for the record: rerun to read it", format)
}
