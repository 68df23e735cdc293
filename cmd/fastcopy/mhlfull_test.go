//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// TestMHLAlsoDestFull: --mhl --also with one destination a small
// filesystem that fills up. That destination's summary line says its
// ASC MHL history was not written and why, and so does its mhl_error in
// --json; the other's line names its generation.
func TestMHLAlsoDestFull(t *testing.T) {
	t.Parallel()
	bin := buildFastcopy(t)
	small := loopfs.Mount(t, loopfs.Config{Type: "ext4", Size: 24 << 20})
	src := filepath.Join(t.TempDir(), "src")
	for i := range 40 {
		writeTestFile(t, filepath.Join(src, fmt.Sprintf("clip%02d.mov", i)), strings.Repeat(fmt.Sprintf("%02d", i), 512<<10))
	}
	other := t.TempDir()
	for _, c := range []struct{ name, dest string }{{"text", "day1"}, {"json", "day2"}} {
		full, two := small.Path(c.dest), filepath.Join(other, c.dest)
		args := []string{"--no-cache", "--no-space-check", "--mhl", src + "/", full, "--also", two}
		if c.name == "json" {
			args = append([]string{"--json"}, args...)
		}
		r := runBinary(t, bin, 0, 0, args...)
		if r.code != 3 || !strings.Contains(r.stderr, "destination full") {
			t.Fatalf("%s: exit %d, want 3 and a full destination:\n%s%s", c.name, r.code, r.stdout, r.stderr)
		}
		if _, err := os.Lstat(filepath.Join(full, "ascmhl")); !os.IsNotExist(err) {
			t.Errorf("%s: the full destination has an ascmhl folder (%v)", c.name, err)
		}
		if c.name == "text" {
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(full) + `: copied .*; ASC MHL history NOT written: .*full`).MatchString(r.stdout) {
				t.Errorf("the full destination's summary line does not say its history was not written:\n%s", r.stdout)
			}
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(two) + `: copied 40 files.*; ASC MHL generation 1 \(40 files\) written`).MatchString(r.stdout) {
				t.Errorf("the other destination's summary line does not name its generation:\n%s", r.stdout)
			}
			continue
		}
		var rep struct {
			Destinations []struct {
				Dest     string `json:"dest"`
				MHL      string `json:"mhl"`
				MHLError string `json:"mhl_error"`
				ExitCode int    `json:"exit_code"`
			} `json:"destinations"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Destinations) != 2 {
			t.Fatalf("--json: %v:\n%s", err, r.stdout)
		}
		if d := rep.Destinations[0]; d.ExitCode != 3 || d.MHL != "" || !strings.Contains(d.MHLError, "full") {
			t.Errorf("--json, the full destination: exit %d, mhl %q, mhl_error %q; want 3, none, and why", d.ExitCode, d.MHL, d.MHLError)
		}
		if d := rep.Destinations[1]; d.ExitCode != 0 || d.MHL == "" || d.MHLError != "" {
			t.Errorf("--json, the other destination: exit %d, mhl %q, mhl_error %q; want 0 and its generation", d.ExitCode, d.MHL, d.MHLError)
		}
	}
}
