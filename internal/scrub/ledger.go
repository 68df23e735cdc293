package scrub

import (
	"fmt"
	"sort"
	"sync"

	"github.com/fastcopy/fastcopy/verify"
)

// How a rotten file was found: the start of its sentence in the report,
// with %s for the digest its entry recorded.
const (
	ByScrub = "--scrub read bytes that are not the digest %s recorded for it, its stat unchanged"
	Earlier = "a run before this one read bytes that are not the digest %s recorded for it, its stat unchanged, and it was not repaired since (the hash cache keeps it marked rotten)"
	ByMove  = "--move read its copy from the device before removing the source, and found bytes that are not the digest %s recorded for it, its stat unchanged"
)

const notRepairedYet = "not in the source (or left out of the run): not repaired; it stays marked rotten in the hash cache, named by every --scrub and every run that meets it, until it is copied again or removed"

// Ledger is a run's list of rotten destination files, by cache key, with
// what the run did with each. Its zero value is empty and ready; it is
// safe for concurrent use.
type Ledger struct {
	mu     sync.Mutex
	rotten map[string]*rotFile
}

// rotFile is a destination file found rotten.
type rotFile struct {
	rel     string
	rec     verify.Sum // the digest its entry recorded
	found   string     // how it was found: the start of its sentence, with %s for rec
	outcome string     // what the run did with it; "" while not met by the walk
}

// Note records the destination file of cache key, rel in the destination,
// as rotten, found as found says (ByScrub, Earlier, ByMove), its entry
// having recorded rec; a file noted already is kept as it was.
func (l *Ledger) Note(key, rel string, rec verify.Sum, found string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rotten == nil {
		l.rotten = map[string]*rotFile{}
	}
	if _, ok := l.rotten[key]; !ok {
		l.rotten[key] = &rotFile{rel: rel, rec: rec, found: found}
	}
}

// RottenAt reports whether the destination file of cache key was found
// rotten, with the digest its entry recorded, and notes that the walk met
// it.
func (l *Ledger) RottenAt(key string) (verify.Sum, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.rotten[key]
	if !ok {
		return verify.Sum{}, false
	}
	if r.outcome == "" {
		// Settle decides it when both sides are read; otherwise the
		// source differs in size or mtime, and the file is a changed one.
		r.outcome = "its source changed since (another size or mtime): copied again as a changed file"
	}
	return r.rec, true
}

// LeftAlone notes that the destination file of cache key, if found
// rotten, was left alone by -u or --ignore-existing: not repaired.
func (l *Ledger) LeftAlone(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r, ok := l.rotten[key]; ok {
		r.outcome = "left alone by -u or --ignore-existing: not copied again; it stays marked rotten in the hash cache, named by every --scrub and every run that meets it, until it is copied again or removed"
	}
}

// Found reports whether any destination file was found rotten.
func (l *Ledger) Found() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.rotten) > 0
}

// Settle decides, for the rotten destination file of cache key whose entry
// recorded rec and whose source was read for srcSum, whether it is copied
// again: only from a source that still holds the digest recorded (nil).
// A source that does not is no known-good copy either: the answer is the
// file's failure, wrapping ErrRotten, and both sides stay as they are. The
// file must have been noted.
func (l *Ledger) Settle(key string, rec, srcSum verify.Sum) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.rotten[key]
	if srcSum == rec {
		r.outcome = "the source holds the digest recorded for it: copied again from the source"
		return nil
	}
	r.outcome = "the source does not hold that digest either: failed, both left as they are (DEST's stays marked rotten in the hash cache)"
	return fmt.Errorf("%w in DEST, and its source no longer holds the digest recorded when both were copied (both stats unchanged): neither is known good; check the source and the destination devices, then copy the good one with --force", ErrRotten)
}

// Rot is one rotten file in the report: its path in the destination and
// the sentence that names it, with what became of it.
type Rot struct {
	Rel string
	Msg string
}

// Report returns every rotten file, by path, with what the run did with
// it. It is asked at the end of the run.
func (l *Ledger) Report() []Rot {
	l.mu.Lock()
	var rs []*rotFile
	for _, r := range l.rotten {
		rs = append(rs, r)
	}
	l.mu.Unlock()
	sort.Slice(rs, func(i, j int) bool { return rs[i].rel < rs[j].rel })
	out := make([]Rot, 0, len(rs))
	for _, r := range rs {
		what := r.outcome
		if what == "" {
			what = notRepairedYet
		}
		out = append(out, Rot{Rel: r.rel, Msg: fmt.Sprintf("%q: rotten on the device: "+r.found+"; %s", r.rel, verify.Hex(r.rec), what)})
	}
	return out
}
