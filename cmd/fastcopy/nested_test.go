//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNestedDestinations runs two fastcopy processes whose destinations
// are nested, one inside the other: while the first holds its destination
// (stopped while it holds it), the second is refused with exit 5 and
// writes nothing, whichever of the two is the outer one, since either
// run's removal of leftover temporaries would reach into the other's
// tree. Two runs into separate directories side by side both copy.
func TestNestedDestinations(t *testing.T) {
	t.Parallel()
	bin := buildFastcopy(t)
	work := scratchFS(t, 512<<20)
	tree := makeTree(t, filepath.Join(work, "src"), treeSpec{bytes: 12 << 20, seed: 5})
	for _, tc := range []struct {
		name         string
		first, other string // destinations, relative to the case's directory
		refused      bool
	}{
		{"other below", "out", "out/d0", true},
		{"other above", "out/d0", "out", true},
		{"side by side", "out/a", "out/b", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := filepath.Join(work, strings.ReplaceAll(tc.name, " ", "-"))
			first, other := filepath.Join(base, tc.first), filepath.Join(base, tc.other)
			// Both exist beforehand: a refused run then creates nothing.
			for _, d := range []string{first, other} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			a := startBinary(t, bin, "-q", "--no-cache", tree.root, first)
			a.stopWhen(t, func() bool { return holds(t, a.cmd.Process.Pid, first) })
			before := names(t, base)
			rb := runBinary(t, bin, 0, 0, "-q", "--no-cache", tree.root, other)
			if tc.refused {
				if rb.code != 5 || !strings.Contains(rb.stderr, "destination is locked") || !strings.Contains(rb.stderr, "fastcopy: hint: ") {
					t.Errorf("the second run: exit %d, want 5 with the reason and a hint:\n%s", rb.code, rb.stderr)
				}
				if after := names(t, base); after != before {
					t.Errorf("the refused run changed the destinations:\nbefore %s\nafter  %s", before, after)
				}
			} else {
				if rb.code != 0 {
					t.Errorf("the second run: exit %d, want 0:\n%s", rb.code, rb.stderr)
				}
				newChecker(tree).complete(t, other)
			}
			a.resume(t)
			if ra := a.wait(t, 0, 0); ra.code != 0 {
				t.Fatalf("the first run: exit %d:\n%s", ra.code, ra.stderr)
			}
			newChecker(tree).complete(t, first)
		})
	}
}

// TestRefusedRunCreatesNothing runs a second fastcopy into a directory
// that does not exist yet below a running copy's destination: it is
// refused (exit 5) before it creates that directory or any of its missing
// parents (a d0/ made there first fails the first run's own d0 when it
// puts it in place), and the first run still finishes.
func TestRefusedRunCreatesNothing(t *testing.T) {
	t.Parallel()
	bin := buildFastcopy(t)
	work := scratchFS(t, 512<<20)
	tree := makeTree(t, filepath.Join(work, "src"), treeSpec{bytes: 12 << 20, seed: 9})
	first := filepath.Join(work, "C", "dst")
	if err := os.MkdirAll(first, 0o755); err != nil {
		t.Fatal(err)
	}
	a := startBinary(t, bin, "-q", "--no-cache", tree.root, first)
	// Stopped as soon as it holds its destination.
	a.stopWhen(t, func() bool { return holds(t, a.cmd.Process.Pid, first) })
	before := names(t, filepath.Join(work, "C"))
	other := filepath.Join(first, "d0", "b", "x")
	rb := runBinary(t, bin, 0, 0, "-q", "--no-cache", filepath.Join(tree.root, "d1"), other)
	if rb.code != 5 || !strings.Contains(rb.stderr, "destination is locked") || !strings.Contains(rb.stderr, first) || !strings.Contains(rb.stderr, "fastcopy: hint: ") {
		t.Errorf("the second run: exit %d, want 5 naming %q with a hint:\n%s", rb.code, first, rb.stderr)
	}
	if after := names(t, filepath.Join(work, "C")); after != before {
		t.Errorf("the refused run created directories:\nbefore %s\nafter  %s", before, after)
	}
	a.resume(t)
	if ra := a.wait(t, 0, 0); ra.code != 0 {
		t.Fatalf("the first run: exit %d:\n%s", ra.code, ra.stderr)
	}
	newChecker(tree).complete(t, first)
}
