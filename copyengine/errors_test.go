package copyengine_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// TestFailureWrapsItsError: a Failure of the summary is the error the file
// failed with, for errors.Is and errors.As, and its JSON stays path and
// error.
func TestFailureWrapsItsError(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(src, "a.txt"), []byte("alpha\n"))
	writeFile(t, filepath.Join(src, "blocked"), []byte("a file\n"))
	if err := os.Mkdir(filepath.Join(dst, "blocked"), 0o755); err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, OnEvent: ev.record})
	if !errors.Is(err, copyengine.ErrSomeFailed) || len(sum.Failures) != 1 {
		t.Fatalf("Run = %v, failures %v; want ErrSomeFailed and one failure", err, sum.Failures)
	}
	f := sum.Failures[0]
	cause := ev.failures()["blocked"]
	if f.Path != "blocked" || cause == nil {
		t.Fatalf("failure %+v, event error %v", f, cause)
	}
	var asErr error = f
	if !errors.Is(asErr, cause) {
		t.Errorf("errors.Is(failure, the event's error %v) = false", cause)
	}
	if runtime.GOOS == "linux" && !errors.Is(asErr, syscall.EISDIR) {
		t.Errorf("errors.Is(failure %v, EISDIR) = false", asErr)
	}
	if f.Err != copyengine.ErrText(cause) {
		t.Errorf("failure text %q, want ErrText of the cause %q", f.Err, copyengine.ErrText(cause))
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || m["path"] != "blocked" || m["error"] != f.Err {
		t.Errorf("failure as JSON %s, want path and error only", b)
	}
}

// TestOneLockedSentinel: a destination another run holds and a hash cache
// another process holds alone are both ErrLocked, fileio's, and keep their
// own words.
func TestOneLockedSentinel(t *testing.T) {
	if copyengine.ErrLocked != fileio.ErrLocked || hashcache.ErrLocked != fileio.ErrLocked {
		t.Fatal("copyengine.ErrLocked and hashcache.ErrLocked are not fileio.ErrLocked")
	}

	src, dst := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(src, "a.txt"), []byte("alpha\n"))
	d, err := fileio.OpenDir(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := fileio.Lock(d); err != nil {
		t.Skipf("no directory locks here: %v", err)
	}
	_, err = runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst})
	if !errors.Is(err, hashcache.ErrLocked) || !errors.Is(err, fileio.ErrLocked) {
		t.Errorf("Run onto a held destination = %v, want fileio.ErrLocked", err)
	}
	if err == nil || !strings.Contains(err.Error(), "destination is locked by another fastcopy") {
		t.Errorf("message %q does not say the destination is locked", err)
	}

	// Runs share a cache; it is held alone by a fastcopy from before they
	// did, which had bbolt open the file for writing for its whole run.
	db := filepath.Join(t.TempDir(), "hashes.db")
	held, err := bolt.Open(db, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, err = hashcache.Open(db, hashcache.Options{LockTimeout: -1})
	if !errors.Is(err, copyengine.ErrLocked) || !errors.Is(err, fileio.ErrLocked) {
		t.Errorf("Open of a held cache = %v, want fileio.ErrLocked", err)
	}
	if err == nil || !strings.Contains(err.Error(), "hash cache is in use by another fastcopy") {
		t.Errorf("message %q does not say the cache is in use", err)
	}
}
