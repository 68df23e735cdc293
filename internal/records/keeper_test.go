package records

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/internal/drives"
	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/outcome"
	"github.com/fastcopy/fastcopy/verify"
)

// testKeeper is a Keeper of o whose summary is sum and whose failures
// go to failed, with no DEST open.
func testKeeper(o Options, dry bool, sum *outcome.Summary, failed *[]string) *Keeper {
	return New(Config{
		Options:    o,
		SkipWrite:  func() bool { return dry },
		TempSuffix: ".fastcopy-tmp",
		Dest:       func() (string, *fileio.Dir) { return "", nil },
		Dirs:       func() []string { return nil },
		Failed:     func(p string, err error) { *failed = append(*failed, p) },
		Count:      func(f func(*outcome.Summary)) { f(sum) },
	})
}

// TestKeeperListsAndWritesTheManifest holds that the listener lists
// what an outcome Listed says, only when the run writes records, and
// that a dry run writes no manifest.
func TestKeeperListsAndWritesTheManifest(t *testing.T) {
	m := filepath.Join(t.TempDir(), "m.xxh128")
	for _, dry := range []bool{true, false} {
		var sum outcome.Summary
		var failed []string
		k := testKeeper(Options{Manifest: m}, dry, &sum, &failed)
		k.Listen(&outcome.Outcome{Path: "a", Listed: true, Sum: verify.Bytes([]byte("a"))})
		k.Listen(&outcome.Outcome{Path: "b"})
		if err := k.WriteManifest(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(m)
		switch {
		case dry && err == nil:
			t.Fatalf("a dry run wrote the manifest: %q", b)
		case !dry && err != nil:
			t.Fatal(err)
		case !dry && string(b) != verify.Hex(verify.Bytes([]byte("a")))+"  a\n":
			t.Fatalf("manifest %q, want a alone", b)
		}
	}
	var sum outcome.Summary
	var failed []string
	k := testKeeper(Options{}, false, &sum, &failed)
	k.Listen(&outcome.Outcome{Path: "a", Listed: true})
	if lines, _ := k.set.Lines(XXH128); len(lines) != 0 {
		t.Fatalf("a run without records listed %v", lines)
	}
}

// TestNoteStopped holds why the summary says a run with --mhl that
// stopped early wrote no generation, and that a reason already given or
// a generation written is kept.
func TestNoteStopped(t *testing.T) {
	const after = "a run stopped early writes none; "
	for _, c := range []struct {
		interrupted, err error
		want             string
	}{
		{nil, nil, ""},
		{errors.New("cancelled"), nil, "interrupted: " + after + "rerun with --mhl to finish the copy and write it"},
		{nil, fmt.Errorf("x: %w", &drives.DestFullError{}), "destination full: " + after + "make room and rerun with --mhl"},
		{nil, &drives.DriveGoneError{}, "a drive went away: " + after + "reconnect it and rerun with --mhl"},
		{nil, errors.New("boom"), "the run stopped with an error: " + after + "fix the cause and rerun with --mhl"},
	} {
		var sum outcome.Summary
		var failed []string
		testKeeper(Options{MHL: true}, false, &sum, &failed).NoteStopped(c.interrupted, c.err)
		if sum.MHLError != c.want {
			t.Errorf("NoteStopped(%v, %v): %q, want %q", c.interrupted, c.err, sum.MHLError, c.want)
		}
	}
	for _, sum := range []outcome.Summary{{MHL: "g"}, {MHLError: "mine"}} {
		was := sum
		var failed []string
		testKeeper(Options{MHL: true}, false, &sum, &failed).NoteStopped(errors.New("x"), nil)
		if !reflect.DeepEqual(sum, was) {
			t.Errorf("NoteStopped changed %+v to %+v", was, sum)
		}
	}
	var sum outcome.Summary
	var failed []string
	testKeeper(Options{MHL: true}, true, &sum, &failed).NoteStopped(errors.New("x"), nil)
	if sum.MHLError != "" {
		t.Errorf("a dry run noted %q", sum.MHLError)
	}
}

// TestFlushesTellOnlyWhatIsDurable holds that OnFlush is told after a
// batch only when every filesystem flushed, after a stopping run's flush
// only when it succeeded, and never when Off.
func TestFlushesTellOnlyWhatIsDurable(t *testing.T) {
	var told []time.Time
	f := Flushes{OnFlush: func(at time.Time) { told = append(told, at) }}
	none := func() []*fileio.Dir { return nil }
	at := time.Unix(1, 0)
	f.AfterBatch(at, map[uint64]error{1: errors.New("fallback")}, none)
	f.AfterBatch(at, map[uint64]error{1: nil}, none)
	f.Flush(func() error { return errors.New("failed") })
	f.Flush(func() error { return nil })
	if len(told) != 2 || !told[0].Equal(at) {
		t.Fatalf("told %v, want %v and one flush's start", told, at)
	}
	f.Off = true
	f.AfterBatch(at, nil, none)
	f.Flush(func() error { t.Error("flushed with Off"); return nil })
	f.Flushed(at)
	if len(told) != 2 {
		t.Fatalf("told %v with Off", told)
	}
}
