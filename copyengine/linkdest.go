package copyengine

import (
	"fmt"
	"time"

	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/cacheuse"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/linkdest"
	"github.com/fastcopy/fastcopy/internal/meta"
	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/verify"
)

// linkDests is the glue of snapshots (--link-dest; package linkdest,
// which finds a file's counterpart, establishes its content from the
// device and makes the link): it builds linkdest's Config from Options,
// gives it the source's digest (from the hash cache, or read, as any
// source read), and counts and reports what became of each file. What
// binds it to the pipeline stays here: the entry, its chunk, its further
// names (linkGroup), the temporaries the run records as made, --move.
type linkDests struct {
	e   *engine
	set *linkdest.Set
}

// open resolves and opens the --link-dest directories: a relative one is
// relative to the destination directory dstRoot, as with rsync. One that
// cannot be opened is noted and left out; the files are then copied.
func (ld *linkDests) open(dstRoot string, undo *closers) {
	e := ld.e
	if len(e.opt.LinkDest) == 0 {
		return
	}
	set, notes := linkdest.Open(linkdest.Config{
		Dirs:       e.opt.LinkDest,
		DstRoot:    dstRoot,
		SkipWrite:  e.skipWrite,
		Cache:      ld.cache(),
		ReadDevice: ld.readDevice,
		Volume:     e.fs.info.VolumeOf,
		ModesLost:  e.fs.info.ModesLost,
	})
	for _, n := range notes {
		ld.note(n)
	}
	undo.add(set.Close)
	ld.set = set
}

// cache is the run's hash cache as linkdest.Config takes it: nil
// without one.
func (ld *linkDests) cache() linkdest.Cache {
	if ld.e.cache == nil {
		return nil
	}
	return ld.e.cache
}

func (ld *linkDests) note(msg string) {
	e := ld.e
	e.count(func(s *Summary) { s.LinkDestNotes = append(s.LinkDestNotes, msg) })
}

// place links en (rel in the destination) to its counterpart under the
// first --link-dest directory that holds it with the same content and
// metadata (linkdest.Set.Find), and reports whether en is done (linked,
// or failed and reported). A dry run decides the same, reading what the
// real run reads, and links nothing.
func (ld *linkDests) place(c *chunk, en *entry, rel string, buf []byte) bool {
	e := ld.e
	if ld.set.Len() == 0 || !en.st.IsRegular() || en.linkCopy {
		return false
	}
	dirRel, name := splitRel(rel)
	used, fallback := ld.set.Find(linkdest.Query{
		DirRel: dirRel, Name: name, Rel: rel, Want: ld.want(en), Buf: buf,
		DestDev: ld.destDev(c),
		Read:    func(r linkdest.Read) { ld.read(rel, r) },
		Source:  func() (verify.Sum, bool) { return ld.sourceDigest(c, en, buf) },
		SameXattrs: func(cand linkdest.Cand) bool {
			mc := e.metaConfig()
			return meta.SameXattrs(c.src.d, en.name, e.opt.Dereference, cand.D, cand.Name, mc.KeptXattr)
		},
		Use: func(f linkdest.Found) (bool, error) {
			if e.skipWrite() {
				ld.report(c, en, rel, f.Sum, f.St, nil, f.At)
				return true, nil
			}
			return ld.link(c, en, rel, f)
		},
	})
	if used {
		return true
	}
	if fallback != nil {
		if e.opt.OnEvent != nil {
			e.opt.OnEvent(Event{Action: ActLinkDestCopy, Path: rel, Err: fallback})
		}
		ld.note(fmt.Sprintf("%q: not linked (%s); copied", rel, ErrText(fallback)))
	}
	return false
}

// want is what en's counterpart must be: its size, and the mode, owner
// and mtime the copy would get (a hard link shares its inode's).
func (ld *linkDests) want(en *entry) linkdest.Want {
	m := ld.e.dedupe.dedupMeta(&en.st)
	return linkdest.Want{Size: en.st.Size, Mode: m.Mode, Uid: m.Uid, Gid: m.Gid, Mtime: en.st.Mtime, Gran: en.gran, Self: en.dstSt}
}

// read counts the bytes read for a counterpart's digest and names a
// rotten one (rel is the file's in DEST).
func (ld *linkDests) read(rel string, r linkdest.Read) {
	if r.Hashed > 0 {
		ld.e.count(func(s *Summary) { s.BytesHashed += r.Hashed })
	}
	if r.Rotten != "" {
		ld.e.scrub.rot(rel, r.Rotten)
	}
}

// readDevice reads a counterpart for its digest past its cached pages,
// failing if it moved (as the decider reads a DEST file it may not trust
// the cache for).
func (ld *linkDests) readDevice(d *fileio.Dir, name string, buf []byte) (verify.Sum, fileio.Stat, error) {
	return ld.e.decide.hashDest(d, name, buf, true)
}

// sourceDigest is the source's digest: from its valid hash-cache entry,
// else read (and remembered, as any source read).
func (ld *linkDests) sourceDigest(c *chunk, en *entry, buf []byte) (verify.Sum, bool) {
	e := ld.e
	if en.st.Size == 0 {
		return verify.Bytes(nil), true
	}
	if en.cache != nil && en.cache.SrcOK {
		e.count(func(s *Summary) { s.CacheHits++ })
		return en.cache.Src, true
	}
	if e.cache != nil && en.srcKey != "" {
		pol := e.fs.info.PolicyOf(c.src.d, en.st.Dev)
		if r := e.cache.Lookup([]string{en.srcKey}); r[0].Found && r[0].Entry.Valid(hashcache.StateOf(&en.st, e.fs.info.KnownVolume(en.st.Dev)), pol) && e.records.cachedExtras(en, r[0].Entry) {
			e.count(func(s *Summary) { s.CacheHits++ })
			return r[0].Entry.Sum, true
		}
	}
	started := time.Now()
	sum, err := e.dedupe.hashSource(c.src.d, en, buf)
	if err != nil {
		return verify.Sum{}, false
	}
	e.count(func(s *Summary) { s.BytesHashed += en.st.Size })
	e.record.Source(en.srcKey, &en.st, sum, en.extra, started)
	return sum, true
}

// destDev is the filesystem of the destination directory of c.
func (ld *linkDests) destDev(c *chunk) uint64 {
	if c.dst != nil && c.dst.devOK {
		return c.dst.dev
	}
	return ld.set.RootFS()
}

// link makes en's name a hard link to the counterpart f (linkdest's
// Link), its temporary recorded as made, and reports whether en is done.
// A link refused for being out of links (EMLINK) or across filesystems
// (EXDEV) is returned as err, and the next counterpart is tried.
func (ld *linkDests) link(c *chunk, en *entry, rel string, f linkdest.Found) (bool, error) {
	e := ld.e
	dd := c.dst.d
	tmp := en.tempName()
	res := ld.set.Link(f.Cand, f.St, linkdest.Place{Dst: dd, Tmp: tmp, Name: en.dstName,
		Before: func() {
			if en.resume {
				e.copier.removeKept(c.dst, tmp) // linked instead: a leftover
			}
			e.made.Clear(dd, c.dst.rel, tmp)
			e.made.Before(c.dst.rel, tmp, false)
		},
		After: func(err error) { e.made.After(dd, c.dst.rel, tmp, nil, err) },
	}, rel)
	switch {
	case res.Err != nil:
		ld.failed(en, rel, res.Err)
		return true, nil
	case res.St == nil:
		return false, res.Fallback
	}
	cur := *res.St
	ld.report(c, en, rel, f.Sum, cur, &cur, f.At)
	return true, nil
}

// report counts en as linked to its counterpart (inode of st), whose
// bytes were read from the device at readAt: its further names link to
// it, and its destination entry is stored once the run's final flush made
// the link durable (placed, nil in a dry run).
//
// Under --move its source is then removed like that of any copy (mover):
// the link is a copy in DEST whose bytes were read from the device and
// found to hold the source's digest before it took the name, and the
// mover checks the source is still the file that digest is of.
func (ld *linkDests) report(c *chunk, en *entry, rel string, sum verify.Sum, st fileio.Stat, placed *fileio.Stat, readAt time.Time) {
	e := ld.e
	if placed != nil && e.cache != nil && st.Size > 0 {
		e.record.DestLater(e.dstSide.Key(rel), placed, sum, time.Now(), cacheuse.DeviceRead(readAt))
	}
	mv := e.moves.item(c.src, en, rel) // --move: noted once placed
	if en.group != nil {
		en.group.ok, en.group.sum, en.group.ino = true, sum, devIno{st.Dev, st.Ino}
		en.group.extra = en.extra
		close(en.group.done)
	}
	e.staged.report(c.stage, rel, func() {
		e.report(&outcome.Outcome{Kind: outcome.Placed, Action: ActLinkDest, Path: rel, Size: en.st.Size, Sum: sum, Extra: en.extra, Listed: true})
		e.mover.Note(mv, sum)
	})
}

// failed reports en as failed; its further names then fail too.
func (ld *linkDests) failed(en *entry, rel string, err error) {
	if en.group != nil {
		close(en.group.done)
	}
	ld.e.fail(rel, err)
}
