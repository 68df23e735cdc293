package hashcache

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// holdEnv makes the test binary a helper that opens the cache named in it,
// says "ready", and holds it until its stdin is closed.
const holdEnv = "HASHCACHE_TEST_HOLD"

func TestMain(m *testing.M) {
	if path := os.Getenv(holdEnv); path != "" {
		os.Exit(hold(path))
	}
	os.Exit(m.Run())
}

func hold(path string) int {
	c, err := Open(path, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin) // until the test closes it, or dies
	if err := c.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startHolder runs the helper on path and returns a function that lets it
// go and waits for it.
func startHolder(t *testing.T, path string) (release func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	released := false
	release = func() {
		if released {
			return
		}
		released = true
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper: %v", err)
		}
	}
	t.Cleanup(release)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}
	return release
}

func TestLockedByOtherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hashes.db")
	release := startHolder(t, path)

	const timeout = 300 * time.Millisecond
	for _, ro := range []bool{false, true} {
		start := time.Now()
		c, err := Open(path, Options{LockTimeout: timeout, ReadOnly: ro})
		d := time.Since(start)
		if !errors.Is(err, ErrLocked) {
			if c != nil {
				c.Close()
			}
			t.Fatalf("Open(ReadOnly %v) while held = %v, want ErrLocked", ro, err)
		}
		if d < timeout-60*time.Millisecond || d > timeout+time.Second {
			t.Errorf("Open gave up after %v, want about %v", d, timeout)
		}
		t.Logf("read-only %v: %v after %v", ro, err, d)
	}
	start := time.Now()
	if _, err := Open(path, Options{LockTimeout: -1}); !errors.Is(err, ErrLocked) {
		t.Errorf("Open(LockTimeout -1) = %v, want ErrLocked", err)
	} else if d := time.Since(start); d > 200*time.Millisecond {
		t.Errorf("Open(LockTimeout -1) took %v, want one try", d)
	}
	defer func(d time.Duration) { clearLockTimeout = d }(clearLockTimeout)
	clearLockTimeout = 100 * time.Millisecond
	if err := Clear(path); !errors.Is(err, ErrLocked) {
		t.Errorf("Clear while held = %v, want ErrLocked", err)
	}

	release()
	c := openT(t, path, Options{LockTimeout: timeout})
	closeT(t, c)
}

// bbolt's flock belongs to the open file description, so a second Open in
// the same process is locked out as well.
func TestLockedInProcess(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "hashes.db")
	c := openT(t, path, Options{})
	_, err := Open(path, Options{LockTimeout: 100 * time.Millisecond})
	if !errors.Is(err, ErrLocked) {
		t.Errorf("second Open in the same process = %v, want ErrLocked", err)
	}
	closeT(t, c)
	c = openT(t, path, Options{LockTimeout: 100 * time.Millisecond})
	closeT(t, c)
}
