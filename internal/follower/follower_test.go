package follower

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

type noRecord struct{}

func (noRecord) Before(string, string, bool)                            {}
func (noRecord) After(*fileio.Dir, string, string, *fileio.Stat, error) {}
func (noRecord) Gone(string)                                            {}

// setup makes DEST with the leader "d/a" and returns a Config over it and
// the leader's inode.
func setup(t *testing.T) (string, Config, Ino) {
	t.Helper()
	dst := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dst, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "d", "a"), []byte("leader"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := fileio.OpenDir(dst)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	d, err := root.OpenBeneath("d")
	if err != nil {
		t.Fatal(err)
	}
	st, err := d.Lstat("a")
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{OpenDir: root.OpenBeneath, ClearLeftover: func(*fileio.Dir, string, string) {}, Made: noRecord{},
		BeforeReplace: func(*fileio.Dir, string, string) error { return nil }}
	return dst, cfg, inoOf(&st)
}

func TestLinkThenFoundLinked(t *testing.T) {
	t.Parallel()
	dst, cfg, want := setup(t)
	n := Name{Rel: "b", LeaderRel: "d/a", Want: want}
	if linked, err := cfg.Link(n); err != nil || !linked {
		t.Fatalf("Link: linked %v, %v", linked, err)
	}
	a, _ := os.Stat(filepath.Join(dst, "d", "a"))
	b, _ := os.Stat(filepath.Join(dst, "b"))
	if !os.SameFile(a, b) {
		t.Fatal("the follower is not a link to the leader")
	}
	if linked, err := cfg.Link(n); err != nil || linked {
		t.Fatalf("a name linked already: linked %v, %v; want nothing done", linked, err)
	}
}

func TestLeaderReplacedIsNotLinked(t *testing.T) {
	t.Parallel()
	dst, cfg, want := setup(t)
	other := filepath.Join(dst, "d", "other") // made while the leader is there: another inode
	if err := os.WriteFile(other, []byte("another"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, filepath.Join(dst, "d", "a")); err != nil {
		t.Fatal(err)
	}
	_, err := cfg.Link(Name{Rel: "b", LeaderRel: "d/a", Want: want})
	var m *refusal.Mismatch
	if !errors.As(err, &m) {
		t.Fatalf("a leader replaced since it was verified: %v, want a mismatch", err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "b")); !os.IsNotExist(err) {
		t.Fatalf("the follower was made: %v", err)
	}
}

// TestWouldJudgesAsLink: a dry run's judgement writes nothing, skips a
// name linked already and would link one that is not.
func TestWouldJudgesAsLink(t *testing.T) {
	t.Parallel()
	dst, cfg, want := setup(t)
	root, err := fileio.OpenDir(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	n := Name{Rel: "b", LeaderRel: "d/a", Want: want}
	if linked, err := (Config{}).Would(n, root); err != nil || !linked {
		t.Fatalf("Would: linked %v, %v; want a link", linked, err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "b")); !os.IsNotExist(err) {
		t.Fatalf("Would wrote the name: %v", err)
	}
	if linked, err := cfg.Link(n); err != nil || !linked {
		t.Fatalf("Link: %v, %v", linked, err)
	}
	if linked, err := (Config{}).Would(n, root); err != nil || linked {
		t.Fatalf("Would of a name linked already: linked %v, %v; want a skip", linked, err)
	}
	clash := errors.New("held under another spelling")
	if _, err := (Config{}).Would(Name{Rel: "c", LeaderRel: "d/a", Want: want, Clash: clash}, nil); err != clash {
		t.Fatalf("Would of a clashing name: %v", err)
	}
}

func TestLeaderNotInPlace(t *testing.T) {
	for _, l := range []Leader{LeaderNotCopied, LeaderFailed} {
		n := Name{Rel: "b", LeaderRel: "a", Leader: l}
		if _, err := (Config{}).Link(n); err == nil || !strings.Contains(err.Error(), `hard link to "a"`) {
			t.Errorf("Link with leader %d: %v", l, err)
		}
		if _, err := (Config{}).Would(n, nil); err == nil || !strings.Contains(err.Error(), "its first name") {
			t.Errorf("Would with leader %d: %v", l, err)
		}
	}
}
