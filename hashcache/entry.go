package hashcache

import (
	"encoding/binary"
	"sort"
	"strings"
	"time"

	"github.com/zeebo/xxh3"
)

// Entry is what the cache remembers of one file: the stat fields seen when
// its digest was computed, the digest, and when the hashing began.
// Times are nanoseconds since the Unix epoch.
type Entry struct {
	Size     int64
	Mtime    int64
	Ctime    int64
	Ino      uint64
	Sum      xxh3.Uint128 // the xxh128 digest (verify.Sum is the same type)
	HashedAt int64        // wall clock when reading for the digest began
	// Volume identifies the filesystem volume the file was on (see
	// Identify); zero when none could be established, and in entries
	// written before volumes were recorded. Such an entry is never valid.
	Volume Volume
	// ReadAt is the wall clock when the file's bytes were last read from
	// the device itself (its cached pages dropped first, or O_DIRECT) and
	// found to hold Sum: a read-back under --verify=device, a --link-dest
	// counterpart read before it was linked to, a --scrub read. Zero when
	// no such read is known: a digest taken through the page cache, and
	// every entry written before this field was (they decode with zero).
	// It plays no part in Valid: the stat vouches for the file being
	// unchanged, and only a read from the device for its bytes (--scrub
	// re-reads the files whose ReadAt is oldest).
	ReadAt int64
	// Rotten marks the entry of a file whose bytes were read from the
	// device and found not to hold Sum, its stat unchanged, and that was
	// not repaired: Sum stays the digest recorded before the rot, ReadAt
	// is zero (a --scrub reads it first), and Valid is false, so that
	// nothing takes Sum for the file's bytes. The engine looks at the
	// stat of a marked entry (Unmarked().Valid) to name the file rotten
	// again wherever a run meets it, until it is copied again or gone.
	Rotten bool
	// Digests are the file's digests in formats other than xxh128 that a
	// record needed (a sha256 manifest, an ASC MHL generation in md5, a
	// BagIt bag), computed in the same read as Sum: "format:text" pairs,
	// sorted and separated by spaces (JoinDigests), so that an Entry stays
	// comparable. Empty in entries written before this field was, and
	// where no other format was asked for.
	Digests string
}

// JoinDigests is the Digests field for digests keyed by format name
// ("sha256") with the text records write.
func JoinDigests(ds map[string]string) string {
	pairs := make([]string, 0, len(ds))
	for n, v := range ds {
		pairs = append(pairs, n+":"+v)
	}
	sort.Strings(pairs)
	return strings.Join(pairs, " ")
}

// DigestMap is e's Digests keyed by format name (nil when it has none).
func (e Entry) DigestMap() map[string]string {
	if e.Digests == "" {
		return nil
	}
	out := map[string]string{}
	for _, p := range strings.Fields(e.Digests) {
		if n, v, ok := strings.Cut(p, ":"); ok {
			out[n] = v
		}
	}
	return out
}

// Unmarked is e without its Rotten mark.
func (e Entry) Unmarked() Entry {
	e.Rotten = false
	return e
}

// FileState is the current lstat of a file, as the engine sees it before it
// decides whether to trust an Entry. Times are nanoseconds since the Unix
// epoch.
type FileState struct {
	Size  int64
	Mtime int64
	Ctime int64
	Ino   uint64
	// Volume is the identity of the volume the file is on now, zero when
	// none could be established (then no entry is valid for it).
	Volume Volume
}

// Policy says which stat fields of a filesystem can be trusted to stay put
// while a file is unchanged, and how coarse its modification times are.
// PolicyFor returns the policy for a filesystem type.
type Policy struct {
	// CheckInode compares inode numbers. Off where the driver makes them up
	// per mount (FAT, exFAT, most FUSE filesystems), so that every remount
	// would otherwise miss.
	CheckInode bool
	// CheckCtime compares change times. Off where the filesystem has no real
	// ctime (FAT reports a creation time or the mtime, sshfs the mtime).
	// Without it no entry is valid (see Vouches).
	CheckCtime bool
	// MtimeGranularity is the resolution of stored times: 2s for FAT, 10ms
	// for exFAT, 100ns for NTFS, 1ns for ext4, xfs and btrfs. Zero means 1ns.
	MtimeGranularity time.Duration
}

// racySlack is added to the granularity to form the racy window (see Racy).
const racySlack = time.Second

// coarseCtime is the ctime resolution the racy rule applies above (see
// Racy): a kernel stamps times from a clock that moves in ticks of up to
// this much, so a finer resolution narrows nothing further.
const coarseCtime = 10 * time.Millisecond

// Vouches reports whether an entry can ever stand for the content of a file
// on a filesystem with policy p. It cannot without a change time: an
// in-place rewrite that puts the old mtime back (a tool that keeps times, or
// touch -r) leaves size, mtime and the made-up inode number as they were, so
// nothing in the stat would show it. On such a filesystem (FAT, exFAT,
// NTFS, SMB, FUSE) the engine falls back to what a copier without a cache
// does: it compares size and mtime, and reads where it must know.
func (p Policy) Vouches() bool { return p.CheckCtime }

// Valid reports whether e still describes the file whose current state is
// cur, so that its digest may be used instead of reading the file.
//
// The entry must have been recorded on the volume the file is on now, and
// that volume must have an identity: paths are reused by other volumes (two
// USB sticks mounted in turn at /media/usb), and a file of another volume
// with the same path, size and times says nothing about this one's bytes.
// Size and mtime must match, the mtimes compared after truncating both to
// p.MtimeGranularity (a file on exFAT reports nanoseconds while its inode is
// cached and 10 ms steps once it has been read back from disk). Inode and
// ctime must match too when the policy says they are stable; ctime is
// truncated the same way. Finally the entry must not be racy (see Racy).
// On a filesystem whose policy does not check ctimes no entry is valid (see
// Policy.Vouches).
func (e Entry) Valid(cur FileState, p Policy) bool {
	g := p.Granularity()
	switch {
	case e.Rotten, !p.Vouches():
		return false
	case cur.Volume == 0 || e.Volume != cur.Volume:
		return false
	case e.Size != cur.Size:
		return false
	case truncate(e.Mtime, g) != truncate(cur.Mtime, g):
		return false
	case p.CheckInode && e.Ino != cur.Ino:
		return false
	case p.CheckCtime && truncate(e.Ctime, g) != truncate(cur.Ctime, g):
		return false
	}
	return !e.Racy(p)
}

// Racy reports whether e can never be trusted because the file's mtime was
// too close to the moment hashing began: a write that landed in the same
// timestamp tick after hashing started would leave size and mtime as
// recorded, so the stat fields could not tell the change apart (git's "racy
// clean" problem). An entry is racy unless
//
//	HashedAt - Mtime >= MtimeGranularity + 1s
//
// Git (built without USE_NSEC, the default) calls an index entry racy when
// its mtime is not in an earlier whole second than the index file's own
// mtime. Git's anchor is a timestamp taken from the same filesystem clock as
// the file's; ours is the local wall clock, while the mtime comes from the
// kernel's coarse clock (one jiffy, up to 10 ms, behind), from an NFS or SMB
// server's clock, or was rounded down by FAT. For any later write to be
// visible we need its mtime to land in another granule:
// HashedAt - skew >= floor(Mtime) + granularity. The extra second covers the
// skew, as git's whole-second rule does; taking the maximum of granularity
// and 1s would not, on FAT (2s granules, rounded down).
//
// The ctime is the check that catches a rewrite whose mtime was put back,
// and it is subject to the same window where it is coarse: a write in the
// tick of the recorded ctime leaves it as it was. Its resolution is the
// policy's granularity (for a destination, the resolution the engine
// measured), and at least a second when the ctime has no nanoseconds (ext3,
// ext4 with 128-byte inodes, which the policy cannot tell from a fine ext4).
// Where it is coarser than coarseCtime an entry is racy unless
//
//	HashedAt >= floor(Ctime) + ctime resolution + 1s
//
// so a file fastcopy has just written there (its ctime is later than the
// start of the read its digest comes from) is read once more by the next
// run, which then records an entry that can be trusted. A finer ctime is
// not subject to the window: every new copy would be untrusted on the next
// run, and the case it would catch (a write that restores the old mtime
// within one clock tick of fastcopy's last change) is far-fetched.
//
// The engine may skip storing racy entries; they are harmless but useless.
func (e Entry) Racy(p Policy) bool {
	w := uint64(p.Granularity()) + uint64(racySlack)
	if e.HashedAt < e.Mtime {
		return true // hashed before it was last written, or clocks disagree
	}
	if uint64(e.HashedAt)-uint64(e.Mtime) < w {
		return true
	}
	if !p.CheckCtime {
		return false
	}
	cg := ctimeResolution(e.Ctime, p)
	if cg <= int64(coarseCtime) {
		return false
	}
	return e.HashedAt < truncate(e.Ctime, cg)+cg+int64(racySlack)
}

// ctimeResolution is the resolution of a ctime t on a filesystem with policy
// p: its granularity, and at least a second for a time with no nanoseconds.
func ctimeResolution(t int64, p Policy) int64 {
	g := p.Granularity()
	if t%int64(time.Second) == 0 {
		g = max(g, int64(time.Second))
	}
	return g
}

// Granularity is the policy's mtime granularity in nanoseconds, at least 1.
func (p Policy) Granularity() int64 {
	if p.MtimeGranularity <= 0 {
		return 1
	}
	return int64(p.MtimeGranularity)
}

// SameTime reports whether the times a and b (ns) fall in one granule of
// g nanoseconds (truncated toward minus infinity, so that times before
// 1970 fall into the right one).
func SameTime(a, b, g int64) bool { return truncate(a, g) == truncate(b, g) }

// truncate rounds t down to a multiple of g (toward minus infinity, so that
// times before 1970 fall into the right granule).
func truncate(t, g int64) int64 {
	if g <= 1 {
		return t
	}
	r := t % g
	if r < 0 {
		r += g
	}
	return t - r
}

// Value encoding, schema version 1:
//
//	uvarint  size (as uint64)
//	varint   mtime
//	varint   ctime - mtime   (zero for most files that were never chmod-ed)
//	uvarint  inode
//	varint   hashedAt - mtime
//	16 bytes digest, Hi then Lo, big endian (the order xxhsum prints)
//	8 bytes  volume, big endian (appended later: a value that ends after
//	         the digest was written by a fastcopy that did not record
//	         volumes, and decodes with Volume zero, never valid)
//	varint   readAt (appended later: a value that ends after the volume
//	         decodes with ReadAt zero, "never read from the device as far
//	         as the cache knows"; an older fastcopy skips it)
//	uvarint  flags, bit 0 Rotten (appended later: a value that ends
//	         after readAt has none set; an older fastcopy skips it, and
//	         takes a rotten file's entry for a valid one)
//	uvarint  length of Digests, then its bytes, zero and none when empty
//	         (appended later: a value that ends after the flags has none;
//	         an older fastcopy skips them)
//	...      fields a later version may append; this version skips them
//	4 bytes  check: low 32 bits of xxh3(value before the check, seeded with
//	         xxh3(key)), big endian
//
// The check makes a torn or bit-flipped page, or a value filed under the
// wrong key, a miss instead of a wrong digest: bbolt checksums only its meta
// pages. Differences wrap around in two's complement, so every int64
// round-trips.

const (
	checkLen  = 4
	sumLen    = 16
	volLen    = 8
	maxValLen = 8*binary.MaxVarintLen64 + sumLen + volLen + checkLen // and the length of Digests
)

// encodeValue appends the encoding of e, stored under key, to dst.
func encodeValue(dst []byte, key string, e Entry) []byte {
	start := len(dst)
	dst = binary.AppendUvarint(dst, uint64(e.Size))
	dst = binary.AppendVarint(dst, e.Mtime)
	dst = binary.AppendVarint(dst, e.Ctime-e.Mtime)
	dst = binary.AppendUvarint(dst, e.Ino)
	dst = binary.AppendVarint(dst, e.HashedAt-e.Mtime)
	dst = binary.BigEndian.AppendUint64(dst, e.Sum.Hi)
	dst = binary.BigEndian.AppendUint64(dst, e.Sum.Lo)
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.Volume))
	dst = binary.AppendVarint(dst, e.ReadAt)
	var flags uint64
	if e.Rotten {
		flags |= 1
	}
	dst = binary.AppendUvarint(dst, flags)
	dst = binary.AppendUvarint(dst, uint64(len(e.Digests)))
	dst = append(dst, e.Digests...)
	return binary.BigEndian.AppendUint32(dst, check(key, dst[start:]))
}

// decodeValue parses a value stored under key. It reports false for anything
// that is not a well-formed value with a matching check.
func decodeValue(key string, v []byte) (Entry, bool) {
	if len(v) < checkLen {
		return Entry{}, false
	}
	body := v[:len(v)-checkLen]
	if binary.BigEndian.Uint32(v[len(body):]) != check(key, body) {
		return Entry{}, false
	}
	var e Entry
	r := reader{b: body}
	e.Size = int64(r.uvarint())
	e.Mtime = r.varint()
	e.Ctime = e.Mtime + r.varint()
	e.Ino = r.uvarint()
	e.HashedAt = e.Mtime + r.varint()
	e.Sum.Hi = r.uint64()
	e.Sum.Lo = r.uint64()
	if len(r.b) >= volLen {
		e.Volume = Volume(r.uint64())
	}
	if len(r.b) > 0 {
		e.ReadAt = r.varint()
	}
	if len(r.b) > 0 {
		e.Rotten = r.uvarint()&1 != 0
	}
	if len(r.b) > 0 {
		e.Digests = r.str()
	}
	if r.bad {
		return Entry{}, false
	}
	return e, true
}

func (r *reader) str() string {
	n := r.uvarint()
	if r.bad || n > uint64(len(r.b)) {
		r.bad, r.b = true, nil
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func check(key string, body []byte) uint32 {
	return uint32(xxh3.HashSeed(body, xxh3.HashString(key)))
}

// reader consumes a value front to back; any short or malformed field sets
// bad and makes the rest read as zero.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) uvarint() uint64 {
	x, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return x
}

func (r *reader) varint() int64 {
	x, n := binary.Varint(r.b)
	if n <= 0 {
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return x
}

func (r *reader) uint64() uint64 {
	if len(r.b) < 8 {
		r.bad, r.b = true, nil
		return 0
	}
	x := binary.BigEndian.Uint64(r.b)
	r.b = r.b[8:]
	return x
}
