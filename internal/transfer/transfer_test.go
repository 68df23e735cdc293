package transfer

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/verify"
)

// TestSettledAt: a read is trusted from the end of the tick of the last
// change plus SettleWindow; a time in whole seconds has a tick of at least
// a second; a ctime too far ahead cannot be judged.
func TestSettledAt(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC).UnixNano()
	w := int64(SettleWindow)
	for _, c := range []struct {
		name         string
		ctime, mtime int64
		res          int64
		want         int64
	}{
		{"fine", now - 7, now - 9, 1, now - 7 + 1 + w},
		{"whole second", now, now - 9, 1, now + int64(time.Second) + w},
		{"later mtime", now - 100, now - 10, 1, now - 10 + 1 + w},
		{"coarse", now + 5, 0, int64(2 * time.Second), now + int64(2*time.Second) + w},
		{"far ahead", now + int64(farCtime), 0, 1, 0},
	} {
		st := fileio.Stat{Ctime: c.ctime, Mtime: c.mtime}
		if got := settledAt(&st, c.res, now); got != c.want {
			t.Errorf("%s: settledAt = %d, want %d", c.name, got, c.want)
		}
	}
	st := fileio.Stat{Ctime: now - 7, Mtime: now - 7}
	if !Settling(&st, time.Unix(0, now), 1) {
		t.Error("a read begun right after a change is trusted")
	}
	if Settling(&st, time.Unix(0, now+2*w), 1) {
		t.Error("a read begun well after the window is not trusted")
	}
}

// TestChangedSinceLooseInode: where inode numbers do not last, another
// number alone is no change; a size is.
func TestChangedSinceLooseInode(t *testing.T) {
	before := fileio.Stat{Ino: 1, Size: 10, Mtime: 5, Ctime: 5}
	after := before
	after.Ino = 2
	if !ChangedSince(before, false, &after) {
		t.Error("another inode number is no change")
	}
	if ChangedSince(before, true, &after) {
		t.Error("another inode number counts where numbers do not last")
	}
	after.Size = 11
	if !ChangedSince(before, true, &after) {
		t.Error("another size is no change")
	}
}

// TestResumable: large, regular, not sparse, and not with --no-resume.
func TestResumable(t *testing.T) {
	st := fileio.Stat{Mode: fileio.ModeRegular | 0o644, Size: 100, Blocks: 1}
	if !(Resume{Min: 100}).Resumable(&st) {
		t.Error("a file of the minimum size is not resumable")
	}
	if (Resume{Min: 101}).Resumable(&st) || (Resume{Off: true}).Resumable(&st) {
		t.Error("a small file, or one under --no-resume, is resumable")
	}
}

// TestClones: a device is known to clone, or not to, once told.
func TestClones(t *testing.T) {
	var c Clones
	if c.Broken(1) || c.Works(1) {
		t.Fatal("a device is known before it was told")
	}
	c.NoteBroken(1)
	c.NoteWorks(2)
	if !c.Broken(1) || c.Works(1) || c.Broken(2) || !c.Works(2) {
		t.Error("what was told is not what is known")
	}
}

// fixture is a source directory and a destination directory with a
// source file of data.
type fixture struct {
	sd, dd *fileio.Dir
	dst    string
	stats  outcome.Stats
}

func newFixture(t *testing.T, data []byte) *fixture {
	t.Helper()
	src, dst := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(src, "f"), old, old); err != nil {
		t.Fatal(err)
	}
	sd, err := fileio.OpenDir(src)
	if err != nil {
		t.Fatal(err)
	}
	dd, err := fileio.OpenDir(dst)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sd.Close(); dd.Close() })
	return &fixture{sd: sd, dd: dd, dst: dst}
}

func (fx *fixture) config() *Config {
	return &Config{
		Ctx: context.Background(), NoReflink: true, Verify: outcome.VerifyOff, Clones: &Clones{},
		Resume: Resume{Min: 1}, Euid: fileio.Geteuid(), Stats: &fx.stats,
		Source: func(f *fileio.File, _ *fileio.Stat) verify.Source { return f },
		Hash: func(f verify.Source, size int64, buf []byte, sink verify.Sink) (verify.Sum, int64, map[string]string, error) {
			sum, n, err := verify.Stream(f, size, false, buf, sink)
			return sum, n, nil, err
		},
		KeepBtime: func(*fileio.Dir, string, *fileio.Stat) {},
		TakeHeld:  func() bool { return false },
	}
}

// run transfers the source file to the temporary "t" (staged: the record
// of what runs made is not asked) with a resume of a kept temporary.
func (fx *fixture) run(t *testing.T, c *Config, st *fileio.Stat) (*Result, error) {
	t.Helper()
	f, err := fx.sd.Open("f", false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if st == nil {
		cur, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		st = &cur
	}
	if err := AwaitSettled(c.Ctx, st, 1); err != nil { // as the caller does before it opens
		t.Fatal(err)
	}
	job := &Job{Src: f, Stat: *st, SrcRes: 1, Dir: fx.dd, Tmp: "t", Staged: true, Resume: true, Buf: make([]byte, 4096)}
	return New(c, job).Run()
}

// TestRunStreams: a file is written by the hashing stream, with the
// source's digest, and its bytes are the source's.
func TestRunStreams(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 1000)
	fx := newFixture(t, data)
	r, err := fx.run(t, fx.config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := verify.Bytes(data)
	if r.Action != outcome.ActCopy || r.Size != int64(len(data)) || r.Sum != want || r.Resumed != 0 {
		t.Errorf("result %v, %d bytes, resumed %d; want a copy of %d bytes", r.Action, r.Size, r.Resumed, len(data))
	}
	got, err := os.ReadFile(filepath.Join(fx.dst, "t"))
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("the temporary does not hold the source's bytes (%v)", err)
	}
	if fx.stats.BytesRead.Load() != int64(len(data)) || fx.stats.BytesWritten.Load() != int64(len(data)) {
		t.Errorf("read %d, written %d; want %d each", fx.stats.BytesRead.Load(), fx.stats.BytesWritten.Load(), len(data))
	}
}

// TestRunResumes: a kept temporary whose start matches the source is taken
// up there; its wrong tail is written over.
func TestRunResumes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows keeps no record of what runs made, so no temporary is taken up there (README, Windows)")
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), 1024) // four pieces of the buffer
	fx := newFixture(t, data)
	kept := append(append([]byte(nil), data[:8192]...), bytes.Repeat([]byte{'x'}, 4096)...)
	if err := os.WriteFile(filepath.Join(fx.dst, "t"), kept, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := fx.run(t, fx.config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Resumed != 8192 {
		t.Errorf("resumed at %d, want 8192", r.Resumed)
	}
	got, err := os.ReadFile(filepath.Join(fx.dst, "t"))
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("the temporary taken up does not hold the source's bytes (%v)", err)
	}
}

// TestRunChanged: a source whose stat is not the walk's fails with
// ErrChanged, and its temporary is removed.
func TestRunChanged(t *testing.T) {
	fx := newFixture(t, []byte("some data"))
	f, err := fx.sd.Open("f", false)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	st.Mtime -= int64(time.Second)
	if _, err := fx.run(t, fx.config(), &st); !errors.Is(err, ErrChanged) {
		t.Fatalf("error %v, want ErrChanged", err)
	}
	if _, err := os.Lstat(filepath.Join(fx.dst, "t")); !os.IsNotExist(err) {
		t.Errorf("the temporary of a failed transfer is left (%v)", err)
	}
}
