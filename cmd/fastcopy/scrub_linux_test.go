//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// scrubRot overwrites the first 4 KiB of path on the image under its
// loop-mounted filesystem, so that its stat stays as it was, and drops
// its cached pages so that the next read sees the new bytes.
func scrubRot(t *testing.T, fs *loopfs.FS, path string) {
	t.Helper()
	d, err := fileio.OpenDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	off, ok := fileio.PhysicalStart(d, filepath.Base(path))
	d.Close()
	if !ok {
		t.Skipf("skipped: no physical extent known for %s here", path)
	}
	img, err := os.OpenFile(fs.Image, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	garbage := bytes.Repeat([]byte{0x5A}, 4096)
	if _, err := img.WriteAt(garbage, off); err != nil {
		t.Fatal(err)
	}
	if err := img.Sync(); err != nil {
		t.Fatal(err)
	}
	img.Close()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(garbage))
	if _, err := f.ReadAt(buf, 0); err != nil || !bytes.Equal(buf, garbage) {
		t.Skip("skipped: the bytes written on the image do not read back through the filesystem here")
	}
}

// scrubRun runs fastcopy in process and returns its exit status, stdout
// and stderr.
func scrubRun(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// The case as found: a snapshot's file rots under an unchanged stat, and
// the next snapshot with --link-dest to it linked it (exit 0, "0 B
// hashed"), so that the new snapshot did not hold the source's bytes.
// Now the counterpart is read, the file copied, the rot named in the
// warnings, --json and --log, and the exit status is 8. A later --scrub
// of the new snapshot, after its own copy rotted, names and repairs it.
func TestScrubCommandLinkDestAndScrub(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: needs root for a loop-mounted ext4")
	}
	work := t.TempDir()
	src, db, logf := filepath.Join(work, "src"), filepath.Join(work, "hashes.db"), filepath.Join(work, "audit.log")
	data := bytes.Repeat([]byte("photo raw bytes "), 16<<10)
	writeTestFile(t, filepath.Join(src, "photo.raw"), string(data))
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(src, "photo.raw"), old, old); err != nil {
		t.Fatal(err)
	}
	fs := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 32 << 20})
	if code, _, stderr := scrubRun("-q", "--cache", db, src, fs.Path("snap1")); code != exitOK {
		t.Fatalf("first snapshot: exit %d\n%s", code, stderr)
	}
	scrubRot(t, fs, fs.Path("snap1", "photo.raw"))

	code, stdout, stderr := scrubRun("-q", "--json", "--log", logf, "--cache", db, "--link-dest", "../snap1", src, fs.Path("snap2"))
	got, _ := os.ReadFile(fs.Path("snap2", "photo.raw"))
	if !bytes.Equal(got, data) {
		t.Fatalf("snap2/photo.raw differs from its source: exit %d\n%s%s", code, stdout, stderr)
	}
	var rep struct {
		LinkDest int64    `json:"link_dest"`
		Copied   int64    `json:"copied"`
		Rotten   []string `json:"rotten"`
		ExitCode int      `json:"exit_code"`
		Scrubbed int64    `json:"scrubbed"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	if code != exitRotten || rep.ExitCode != exitRotten || rep.LinkDest != 0 || rep.Copied != 1 || len(rep.Rotten) != 1 || !strings.Contains(rep.Rotten[0], "snap1/photo.raw") {
		t.Errorf("exit %d, --json %+v; want exit 8, the file copied, snap1/photo.raw named rotten\n%s", code, rep, stderr)
	}
	if !strings.Contains(stderr, "fastcopy: warning: ") || !strings.Contains(stderr, "rotten on the device") {
		t.Errorf("no warning names the rot:\n%s", stderr)
	}
	if lg, _ := os.ReadFile(logf); !bytes.Contains(lg, []byte(`"action":"rotten","path":"photo.raw"`)) {
		t.Errorf("--log has no rotten line for photo.raw:\n%s", lg)
	}
	if code, _, stderr := scrubRun("verify", "-q", "--cache", db, src, fs.Path("snap2")); code != exitOK {
		t.Errorf("verify of snap2 with the cache: exit %d\n%s", code, stderr)
	}

	// A plain rerun into snap2 skips photo.raw unread; --scrub reads it.
	scrubRot(t, fs, fs.Path("snap2", "photo.raw"))
	time.Sleep(1100 * time.Millisecond)
	code, stdout, stderr = scrubRun("-q", "--json", "--log", logf, "--cache", db, "--scrub", "1s", src, fs.Path("snap2"))
	rep.Rotten = nil
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	got, _ = os.ReadFile(fs.Path("snap2", "photo.raw"))
	if code != exitRotten || rep.Scrubbed != 1 || len(rep.Rotten) != 1 || !strings.Contains(rep.Rotten[0], "copied again from the source") || !bytes.Equal(got, data) {
		t.Errorf("--scrub: exit %d, --json %+v, repaired %v; want exit 8, photo.raw named and copied again\n%s", code, rep, bytes.Equal(got, data), stderr)
	}
	if code, _, stderr := scrubRun("-q", "--cache", db, "--scrub", "1s", src, fs.Path("snap2")); code != exitOK {
		t.Errorf("--scrub after the repair: exit %d\n%s", code, stderr)
	}
}

// --scrub needs the cache, and takes an age; --scrub-max needs --scrub.
func TestScrubCommandRefusals(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	src := filepath.Join(work, "src")
	writeTestFile(t, filepath.Join(src, "a"), "a")
	for _, args := range [][]string{
		{"--scrub", "30d", "--no-cache"},
		{"--scrub", "thirty"},
		{"--scrub", "0d"},
		{"--scrub-max", "1G"},
		{"--scrub", "12h", "--scrub-max", "lots"},
	} {
		code, _, stderr := scrubRun(append(args, src, filepath.Join(work, "dst"))...)
		if code != exitUsage || !strings.Contains(stderr, "fastcopy: error: ") {
			t.Errorf("%q: exit %d, want 2\n%s", args, code, stderr)
		}
	}
	if _, err := os.Lstat(filepath.Join(work, "dst")); !os.IsNotExist(err) {
		t.Errorf("a refused run wrote DEST (%v)", err)
	}
}
