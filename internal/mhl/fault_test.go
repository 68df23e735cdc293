//go:build fcfault

package mhl

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// noTemps fails the test if the ascmhl folder of root holds a temporary.
func noTemps(t *testing.T, root string) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(root, "ascmhl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), "fastcopy-tmp") {
			t.Errorf("temporary %q left behind", e.Name())
		}
	}
}

// A write that fails midway leaves the history as it was (or, failing at
// the chain, a complete generation the chain does not list), never part
// of a file, and the next write goes on from there.
func TestWriteGenerationFaults(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fault     fileio.Fault
		unchained bool // the new generation is in place, the chain is not
	}{
		{"generation write fails", fileio.Fault{Op: fileio.OpWrite, PathHas: "0002_", Err: syscall.ENOSPC, Short: true}, false},
		{"generation flush fails", fileio.Fault{Op: fileio.OpSync, PathHas: ".0002_", Err: syscall.EIO}, false},
		{"generation rename fails", fileio.Fault{Op: fileio.OpRename, PathHas: "0002_", Err: syscall.EIO}, false},
		{"chain write fails", fileio.Fault{Op: fileio.OpWrite, PathHas: "ascmhl_chain.xml", Err: syscall.ENOSPC}, true},
		{"chain rename fails", fileio.Fault{Op: fileio.OpRename, PathHas: "ascmhl_chain.xml", Err: syscall.EIO}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := card(t)
			if _, err := WriteGeneration(root, gen(listFiles(t, root), t0)); err != nil {
				t.Fatal(err)
			}
			chain := filepath.Join(root, "ascmhl", "ascmhl_chain.xml")
			before := readFile(t, chain)
			f := tc.fault
			ng := gen(listFiles(t, root), t1)
			ng.faults = fileio.NewFaultSet(&f)
			_, err := WriteGeneration(root, ng)
			if err == nil {
				t.Fatal("WriteGeneration succeeded through the fault")
			}
			if f.Calls() == 0 {
				t.Fatal("the fault was never reached")
			}
			if !bytes.Equal(readFile(t, chain), before) {
				t.Error("the chain changed")
			}
			noTemps(t, root)
			h, err := Load(root)
			if err != nil {
				t.Fatal(err)
			}
			if len(h.Generations) != 1 || (len(h.Unchained) == 1) != tc.unchained {
				t.Fatalf("after the fault: %d generations, unchained %q", len(h.Generations), h.Unchained)
			}
			w, err := WriteGeneration(root, gen(listFiles(t, root), t1.Add(60e9)))
			if err != nil {
				t.Fatal(err)
			}
			want := 2
			if tc.unchained {
				want = 3
			}
			if w.Seq != want {
				t.Errorf("the next write is generation %d, want %d", w.Seq, want)
			}
			noTemps(t, root)
		})
	}
}
