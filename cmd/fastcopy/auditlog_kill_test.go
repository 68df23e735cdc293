//go:build linux

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A run killed with SIGKILL leaves a log whose every line is a whole JSON
// object (a last line the kill tore is cut by the next run, see
// openAuditLog), and every file it names is in DEST, complete, with the
// digest the line gives. The runs are held to --bwlimit 12M so that they
// last several commit batches, each of which writes lines.
func TestAuditLogKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in -short mode: runs the binary for about half a minute")
	}
	bin := buildFastcopy(t)
	work := scratchFS(t, 512<<20)
	src, dst := filepath.Join(work, "src"), filepath.Join(work, "dst")
	tree := makeTree(t, src, treeSpec{bytes: 24 << 20, seed: 3})
	args := func(log string) []string {
		return []string{"-q", "--no-cache", "--bwlimit", "12M", "--log", log, src, dst}
	}
	full := runBinary(t, bin, 0, 0, args(filepath.Join(work, "full.log"))...)
	if full.code != 0 {
		t.Fatalf("a full run exited %d:\n%s", full.code, full.stderr)
	}
	d := full.elapsed
	t.Logf("a full run takes %v", d.Round(time.Millisecond))

	r := rand.New(rand.NewSource(11))
	named := 0
	scale := 1.0
	for kill, try := 0, 0; kill < 3; try++ {
		if try == 8 {
			t.Fatalf("only %d of %d runs were killed: each finished first", kill, try)
		}
		if err := os.RemoveAll(dst); err != nil {
			t.Fatal(err)
		}
		logf := filepath.Join(work, fmt.Sprintf("try%d.log", try))
		delay := time.Duration((0.35 + 0.5*r.Float64()) * scale * float64(d))
		res := runBinary(t, bin, delay, syscall.SIGKILL, args(logf)...)
		if res.signal != syscall.SIGKILL {
			t.Logf("the run finished (exit %d) before the kill after %v: again, sooner", res.code, delay.Round(time.Millisecond))
			scale /= 2
			continue
		}
		kill++
		raw, err := os.ReadFile(logf)
		if err != nil {
			t.Fatal(err)
		}
		if i := bytes.LastIndexByte(raw, '\n'); i+1 < len(raw) {
			tail := raw[i+1:]
			if !bytes.HasPrefix([]byte(tornPrefix), tail[:min(len(tail), len(tornPrefix))]) {
				t.Fatalf("the log ends with a fragment that is not the start of a line: %q", tail)
			}
			t.Logf("the kill tore the last line (%d bytes)", len(tail))
			raw = raw[:i+1]
		}
		lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
		files := 0
		for n, line := range lines {
			var rec logRecord
			if err := json.Unmarshal(line, &rec); err != nil {
				t.Fatalf("line %d is not a JSON object: %v\n%s", n+1, err, line)
			}
			if n == 0 && rec.Action != "run-start" {
				t.Fatalf("the first line is not the run's start: %s", line)
			}
			switch rec.Action {
			case "run-start":
			case "run-end":
				t.Fatalf("a killed run wrote its last line: %s", line)
			case "copy", "clone", "dedup-clone", "dedup-link", "hardlink", "link-copy":
				files++
				want, ok := tree.files[rec.Path]
				if !ok {
					t.Fatalf("the log names %q, which the source does not have", rec.Path)
				}
				data, err := os.ReadFile(filepath.Join(dst, rec.Path))
				if err != nil {
					t.Fatalf("the log names %q, which is not in DEST: %v", rec.Path, err)
				}
				if sha256.Sum256(data) != want {
					t.Fatalf("the log names %q, which is not complete in DEST", rec.Path)
				}
				if rec.XXH128 != xxhOf(t, filepath.Join(dst, rec.Path)) || rec.Size == nil || *rec.Size != int64(len(data)) {
					t.Fatalf("%q: the line says size %v, xxh128 %s; the file in DEST differs", rec.Path, rec.Size, rec.XXH128)
				}
			case "symlink":
				files++
				if target, err := os.Readlink(filepath.Join(dst, rec.Path)); err != nil || target != tree.symlinks[rec.Path] {
					t.Fatalf("the log names the symlink %q: in DEST %q (%v), want %q", rec.Path, target, err, tree.symlinks[rec.Path])
				}
			default:
				t.Fatalf("an unexpected line: %s", line)
			}
		}
		t.Logf("kill %d after %v: %d lines name files", kill, delay.Round(time.Millisecond), files)
		named += files
	}
	if named == 0 {
		t.Fatal("no killed run left a line naming a file: the runs were too short to flush a batch")
	}
}
