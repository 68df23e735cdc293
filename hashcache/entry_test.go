package hashcache

import (
	"math"
	"testing"
	"time"

	"github.com/zeebo/xxh3"
)

const sec = int64(time.Second)

// base is a file last written on 2024-01-01 and hashed a day later.
var base = Entry{
	Size:     4096,
	Mtime:    1704067200*sec + 123456789,
	Ctime:    1704067200*sec + 123456789,
	Ino:      1234567,
	Sum:      xxh3.Uint128{Hi: 0x0123456789abcdef, Lo: 0xfedcba9876543210},
	HashedAt: 1704153600 * sec,
	Volume:   0x5eed,
}

func stateOf(e Entry) FileState {
	return FileState{Size: e.Size, Mtime: e.Mtime, Ctime: e.Ctime, Ino: e.Ino, Volume: e.Volume}
}

// validPolicies are the policies TestValid and TestValidRacy judge
// entries by.
type validPolicies struct {
	ext4, vfat, exfat Policy
	// Filesystems with a ctime and coarse times (an unknown type, old
	// ext3): the granule rules matter where entries are used at all.
	coarse, tenms Policy
	noIno         Policy
}

func newValidPolicies() validPolicies {
	return validPolicies{
		ext4:   PolicyFor("ext4"),
		vfat:   PolicyFor("vfat"),
		exfat:  PolicyFor("exfat"),
		coarse: PolicyFor(""),
		tenms:  Policy{CheckInode: true, CheckCtime: true, MtimeGranularity: 10 * time.Millisecond},
		noIno:  Policy{CheckCtime: true, MtimeGranularity: 10 * time.Millisecond},
	}
}

// validCase is a change f made to base and to its file's state, and
// whether the entry is still valid for it under p.
type validCase struct {
	name string
	f    func(e *Entry, s *FileState)
	p    Policy
	want bool
}

func runValid(t *testing.T, tests []validCase) {
	with := func(f func(e *Entry, s *FileState)) (Entry, FileState) {
		e, s := base, stateOf(base)
		f(&e, &s)
		return e, s
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, s := with(tt.f)
			if got := e.Valid(s, tt.p); got != tt.want {
				t.Errorf("Valid = %v, want %v (entry %+v, state %+v, policy %+v)", got, tt.want, e, s, tt.p)
			}
		})
	}
}

func TestValid(t *testing.T) {
	t.Parallel()
	p := newValidPolicies()
	runValid(t, []validCase{
		{"unchanged", func(e *Entry, s *FileState) {}, p.ext4, true},
		{"unchanged vfat: no ctime, nothing vouched for", func(e *Entry, s *FileState) {}, p.vfat, false},
		{"unchanged exfat: no ctime, nothing vouched for", func(e *Entry, s *FileState) {}, p.exfat, false},
		{"unchanged coarse", func(e *Entry, s *FileState) {}, p.coarse, true},
		{"another volume", func(e *Entry, s *FileState) { s.Volume++ }, p.ext4, false},
		{"another volume vfat", func(e *Entry, s *FileState) { s.Volume++ }, p.vfat, false},
		{"volume without identity", func(e *Entry, s *FileState) { s.Volume = 0 }, p.ext4, false},
		{"entry without volume, file on one", func(e *Entry, s *FileState) { e.Volume = 0 }, p.ext4, false},
		{"neither has a volume", func(e *Entry, s *FileState) { e.Volume, s.Volume = 0, 0 }, p.vfat, false},
		{"size changed", func(e *Entry, s *FileState) { s.Size++ }, p.ext4, false},
		{"size changed vfat", func(e *Entry, s *FileState) { s.Size = 0 }, p.vfat, false},
		{"mtime +1ns on ext4", func(e *Entry, s *FileState) { s.Mtime++ }, p.ext4, false},
		{"mtime +1s on ext4", func(e *Entry, s *FileState) { s.Mtime += sec }, p.ext4, false},
		{"mtime earlier on ext4", func(e *Entry, s *FileState) { s.Mtime -= sec }, p.ext4, false},
		// ns while the inode is cached, 10 ms steps once reread.
		{"mtime within 10ms granule", func(e *Entry, s *FileState) {
			e.Mtime = 1704067200*sec + 120*int64(time.Millisecond) + 3456
			s.Mtime = 1704067200*sec + 120*int64(time.Millisecond)
		}, p.tenms, true},
		{"mtime next 10ms granule", func(e *Entry, s *FileState) {
			e.Mtime = 1704067200*sec + 120*int64(time.Millisecond)
			s.Mtime = 1704067200*sec + 130*int64(time.Millisecond)
		}, p.tenms, false},
		{"mtime within 2s granule", func(e *Entry, s *FileState) {
			e.Mtime = 1704067200 * sec
			s.Mtime = 1704067201*sec + 999
		}, p.coarse, true},
		{"mtime next 2s granule", func(e *Entry, s *FileState) {
			e.Mtime = 1704067201 * sec
			s.Mtime = 1704067202 * sec
		}, p.coarse, false},
		{"ctime moved, checked", func(e *Entry, s *FileState) { s.Ctime += sec }, p.ext4, false},
		{"ctime moved, not checked", func(e *Entry, s *FileState) { s.Ctime += sec }, p.vfat, false},
		{"ctime moved by 1ns, checked", func(e *Entry, s *FileState) { s.Ctime++ }, p.ext4, false},
		{"inode changed, checked", func(e *Entry, s *FileState) { s.Ino++ }, p.ext4, false},
		{"inode changed, not checked", func(e *Entry, s *FileState) { s.Ino++ }, p.noIno, true},
		{"pre-1970 mtime within 2s granule", func(e *Entry, s *FileState) {
			e.Mtime = -3*sec + 1
			s.Mtime = -3*sec + 500
		}, p.coarse, true},
		{"pre-1970 mtime across 2s granule", func(e *Entry, s *FileState) {
			e.Mtime = 0
			s.Mtime = -1
		}, p.coarse, false},
		{"zero policy is 1ns", func(e *Entry, s *FileState) { s.Mtime++ }, Policy{}, false},
	})
}

func TestValidRacy(t *testing.T) {
	t.Parallel()
	p := newValidPolicies()
	runValid(t, []validCase{
		// Racy: hashed too soon after the last write.
		{"racy: hashed 1ms after mtime", func(e *Entry, s *FileState) {
			e.HashedAt = e.Mtime + int64(time.Millisecond)
		}, p.ext4, false},
		{"racy: hashed 999ms after mtime", func(e *Entry, s *FileState) {
			e.HashedAt = e.Mtime + 999*int64(time.Millisecond)
		}, p.ext4, false},
		{"not racy: hashed 1s after mtime", func(e *Entry, s *FileState) {
			e.HashedAt = e.Mtime + sec + 1
		}, p.ext4, true},
		{"racy at 2s: hashed 2.5s after mtime", func(e *Entry, s *FileState) {
			e.HashedAt = e.Mtime + 2500*int64(time.Millisecond)
		}, p.coarse, false},
		{"not racy at 2s: hashed 3s after mtime", func(e *Entry, s *FileState) {
			e.HashedAt = e.Mtime + 3*sec
		}, p.coarse, true},
		{"racy: mtime after hashing (clock skew)", func(e *Entry, s *FileState) {
			e.HashedAt = e.Mtime - sec
		}, p.ext4, false},
		{"racy: never hashed", func(e *Entry, s *FileState) { e.HashedAt = 0 }, p.ext4, false},
		{"ctime recent is not racy", func(e *Entry, s *FileState) {
			e.Ctime = e.HashedAt + int64(time.Millisecond) // times set after hashing a new copy
			s.Ctime = e.Ctime
		}, p.ext4, true},
		// A coarse ctime: a write in its tick after the entry was
		// recorded would leave it as it was (mtime put back).
		{"racy: whole-second ctime, hashed in its second", func(e *Entry, s *FileState) {
			e.Ctime = e.HashedAt - 500*int64(time.Millisecond)
			e.Ctime -= e.Ctime % sec
			s.Ctime = e.Ctime
			e.HashedAt = e.Ctime + 999*int64(time.Millisecond)
		}, p.ext4, false},
		{"racy: whole-second ctime, new copy (times set after hashing)", func(e *Entry, s *FileState) {
			e.Ctime = e.HashedAt - e.HashedAt%sec + sec
			s.Ctime = e.Ctime
		}, p.ext4, false},
		{"racy: whole-second ctime, hashed 1.5s later", func(e *Entry, s *FileState) {
			e.Ctime = e.HashedAt - e.HashedAt%sec - sec
			s.Ctime = e.Ctime
			e.HashedAt = e.Ctime + 1500*int64(time.Millisecond)
		}, p.ext4, false},
		{"not racy: whole-second ctime, hashed 2s later", func(e *Entry, s *FileState) {
			e.Ctime = e.HashedAt - e.HashedAt%sec - 2*sec
			s.Ctime = e.Ctime
		}, p.ext4, true},
		{"racy: 2s ctime, hashed 2.5s after its granule", func(e *Entry, s *FileState) {
			e.Ctime = e.HashedAt - 2500*int64(time.Millisecond)
			s.Ctime = e.Ctime
			e.HashedAt = e.Ctime - e.Ctime%(2*sec) + 2500*int64(time.Millisecond)
		}, p.coarse, false},
		{"not racy: 10ms ctime (a clock tick), new copy", func(e *Entry, s *FileState) {
			e.Ctime = e.HashedAt + 20*int64(time.Millisecond)
			s.Ctime = e.Ctime
		}, p.tenms, true},
	})
}

func TestRacyExtremes(t *testing.T) {
	t.Parallel()
	p := PolicyFor("ext4")
	for _, e := range []Entry{
		{Mtime: math.MinInt64, HashedAt: math.MaxInt64},
		{Mtime: math.MaxInt64, HashedAt: math.MinInt64},
		{Mtime: math.MinInt64, HashedAt: math.MinInt64},
	} {
		want := e.HashedAt < e.Mtime || e.HashedAt == e.Mtime
		if got := e.Racy(p); got != want {
			t.Errorf("Racy(%+v) = %v, want %v", e, got, want)
		}
	}
}

func TestPolicyFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fs           string
		inode, ctime bool
		gran         time.Duration
	}{
		{"ext4", true, true, time.Nanosecond},
		{"xfs", true, true, time.Nanosecond},
		{"btrfs", true, true, time.Nanosecond},
		{"tmpfs", true, true, time.Nanosecond},
		{"nfs", true, true, time.Nanosecond},
		{"overlay", true, true, time.Nanosecond},
		{"vfat", false, false, 2 * time.Second},
		{"msdos", false, false, 2 * time.Second},
		{"exfat", false, false, 10 * time.Millisecond},
		{"ntfs", false, false, 100 * time.Nanosecond},
		{"ntfs3", false, false, 100 * time.Nanosecond},
		{"fuseblk", false, false, 2 * time.Second},
		{"fuse", false, false, 2 * time.Second},
		{"fuse.sshfs", false, false, 2 * time.Second},
		{"fuse.exfat-fuse", false, false, 2 * time.Second},
		{"", true, true, 2 * time.Second},
		{"9p", true, true, 2 * time.Second},
	}
	for _, tt := range tests {
		p := PolicyFor(tt.fs)
		if p.CheckInode != tt.inode || p.CheckCtime != tt.ctime || p.MtimeGranularity != tt.gran {
			t.Errorf("PolicyFor(%q) = %+v, want inode %v ctime %v granularity %v", tt.fs, p, tt.inode, tt.ctime, tt.gran)
		}
	}
}

func TestEncoding(t *testing.T) {
	t.Parallel()
	for _, e := range []Entry{
		base,
		{},
		{Size: -1, Mtime: math.MinInt64, Ctime: math.MaxInt64, Ino: math.MaxUint64, HashedAt: math.MinInt64,
			Sum: xxh3.Uint128{Hi: math.MaxUint64, Lo: math.MaxUint64}, Volume: math.MaxUint64},
	} {
		v := encodeValue(nil, "/k", e)
		if len(v) > maxValLen {
			t.Errorf("value of %d bytes, more than maxValLen %d", len(v), maxValLen)
		}
		got, ok := decodeValue("/k", v)
		if !ok || got != e {
			t.Errorf("decode(encode(%+v)) = %+v, %v", e, got, ok)
		}
		if _, ok := decodeValue("/other", v); ok {
			t.Errorf("value decoded under another key")
		}
		for i := range v {
			w := append([]byte(nil), v...)
			w[i] ^= 0x10
			if _, ok := decodeValue("/k", w); ok {
				t.Errorf("value with byte %d flipped decoded", i)
			}
		}
		for n := 0; n < len(v); n++ {
			if _, ok := decodeValue("/k", v[:n]); ok {
				t.Errorf("value cut to %d bytes decoded", n)
			}
		}
	}
	t.Logf("a typical entry encodes in %d bytes", len(encodeValue(nil, "/k", base)))
}

// A later version may append fields before the check; this one skips them.
func TestEncodingAppendedFields(t *testing.T) {
	t.Parallel()
	v := encodeValue(nil, "/k", base)
	body := append(v[:len(v)-checkLen:len(v)-checkLen], 0x05, 0xff, 0x01)
	w := append(body, 0, 0, 0, 0)
	c := check("/k", body)
	w[len(w)-4], w[len(w)-3], w[len(w)-2], w[len(w)-1] = byte(c>>24), byte(c>>16), byte(c>>8), byte(c)
	got, ok := decodeValue("/k", w)
	if !ok || got != base {
		t.Errorf("decode with appended fields = %+v, %v", got, ok)
	}
}

// A value written before volumes were recorded ends after the digest: it
// decodes, with no volume, and is valid for no file.
func TestEncodingWithoutVolume(t *testing.T) {
	t.Parallel()
	v := encodeValue(nil, "/k", base)
	cut := len(v) - checkLen - volLen - 1 // the volume and a zero readAt
	body := v[:cut:cut]
	c := check("/k", body)
	old := append(body, byte(c>>24), byte(c>>16), byte(c>>8), byte(c))
	got, ok := decodeValue("/k", old)
	want := base
	want.Volume = 0
	if !ok || got != want {
		t.Fatalf("decode of a value without a volume = %+v, %v; want %+v", got, ok, want)
	}
	if got.Valid(stateOf(base), PolicyFor("ext4")) {
		t.Errorf("an entry without a volume is valid for a file on volume %#x", base.Volume)
	}
}
