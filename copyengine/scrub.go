package copyengine

import (
	"errors"

	"github.com/fastcopy/fastcopy/internal/scrub"
	"github.com/fastcopy/fastcopy/verify"
)

// DefaultScrubMax is the bytes --scrub reads per run when ScrubMax is
// zero: 64 GiB, so that a daily run cycles through a 2 TB DEST in a month.
const DefaultScrubMax = scrub.DefaultMax

// ErrRotten is wrapped by the failure of a DEST file --scrub found rotten
// whose source no longer holds the digest recorded for it either: neither
// side is known good, so nothing is copied.
var ErrRotten = scrub.ErrRotten

// scrubber is the glue of --scrub (package scrub): it runs scrub.Pass
// before the walk, holds the run's scrub.Ledger of rotten DEST files,
// which the decider (lookupCache, checkEntry) asks and tells what became
// of each (its methods), and names them all at the end. Every rotten file is in
// Summary.Rotten and an ActRotten event, with what became of it.
type scrubber struct {
	e *engine
	scrub.Ledger
}

// pass re-reads the DEST files due for it. It runs before the walk, once
// the destination root is open and locked.
func (sc *scrubber) pass() {
	e := sc.e
	if e.opt.Scrub <= 0 || e.cache == nil || e.dstRoot == nil || e.dstSide.Abs == "" {
		return
	}
	buf := e.buf()
	defer e.putBuf(buf)
	res := scrub.Pass(e.ctx, scrub.Config{
		Age:       e.opt.Scrub,
		Max:       e.opt.ScrubMax,
		SkipWrite: e.skipWrite,
		Cache:     e.cache,
		Root:      e.dstRoot,
		Prefix:    e.dstSide.Key("") + "/",
		Policy:    e.decide.dstPolicy,
		Volume:    e.fs.info.VolumeOf,
		Buf:       *buf,
		Sink:      e.bw.Sink(e.ctx),
		Read:      func(n int64) { e.stats.BytesRead.Add(n) },
		Ledger:    &sc.Ledger,
	})
	if res.Files > 0 {
		e.count(func(s *Summary) { s.Scrubbed += res.Files; s.BytesScrubbed += res.Bytes })
	}
}

// settle decides, for a rotten DEST file whose source was read for srcSum
// (checkEntry), whether it is copied again (false: copy) or fails, named,
// both sides left as they are (true: done); see scrub.Ledger.Settle.
func (sc *scrubber) settle(en *entry, rel string, srcSum verify.Sum) bool {
	err := sc.Settle(en.cache.DstKey, en.cache.Rec, srcSum)
	if err == nil {
		return false
	}
	if en.group != nil {
		close(en.group.done)
	}
	sc.e.fail(rel, err)
	return true
}

// report names every rotten DEST file, with what the run did with it, in
// the summary and as events. It runs at the end of the run.
func (sc *scrubber) report() {
	for _, r := range sc.Report() {
		sc.rot(r.Rel, r.Msg)
	}
}

// rot names a rotten file in the summary and as an event.
func (sc *scrubber) rot(rel, msg string) {
	e := sc.e
	e.count(func(s *Summary) { s.Rotten = append(s.Rotten, msg) })
	e.emit(Event{Action: ActRotten, Path: rel, Err: errors.New(msg)})
}
