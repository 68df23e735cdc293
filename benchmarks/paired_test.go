//go:build linux

package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestPairedRatios: a mode is compared with its baseline round by round,
// and the table gives the median of those ratios, not the ratio of the
// two medians, which would pair rounds that saw different machines.
func TestPairedRatios(t *testing.T) {
	runs := func(secs ...float64) []runResult {
		var rs []runResult
		for _, s := range secs {
			rs = append(rs, runResult{Seconds: s, CPUSeconds: s / 2})
		}
		return rs
	}
	// Round 2 was slow for both builds. Paired: 1.1, 1.1, 1.1 → 1.10.
	// Ratio of medians: 2.2 / 1.0 = 2.20.
	newCell := &cell{Workload: "tree4k", Condition: "warm", Tool: "fastcopy", Runs: runs(1.1, 5.5, 2.2)}
	baseCell := &cell{Workload: "tree4k", Condition: "warm", Tool: basePrefix + "fastcopy", Runs: runs(1.0, 5.0, 2.0)}
	cp := &cell{Workload: "tree4k", Condition: "warm", Tool: "cp", Runs: runs(1, 1, 1)}
	r := &report{Results: []*cell{newCell, cp, baseCell}}
	r.computeRatios()
	if newCell.Pairs != 3 || newCell.PairedWall < 1.099 || newCell.PairedWall > 1.101 {
		t.Fatalf("paired wall ratio %.3f over %d pairs, want 1.100 over 3", newCell.PairedWall, newCell.Pairs)
	}
	if newCell.PairedCPU < 1.099 || newCell.PairedCPU > 1.101 {
		t.Errorf("paired CPU ratio %.3f, want 1.100", newCell.PairedCPU)
	}
	if cp.Pairs != 0 || baseCell.Pairs != 0 {
		t.Errorf("cells without a baseline counterpart were paired: cp %d, base %d", cp.Pairs, baseCell.Pairs)
	}
	var out bytes.Buffer
	r.writeMarkdown(&out)
	if !strings.Contains(out.String(), "| tree4k | warm | fastcopy | 2.200 | 2.000 | 1.10 | 1.10 | 3 |") {
		t.Errorf("the side-by-side table lacks the paired row:\n%s", out.String())
	}
}

// TestFloorsPreset: -floors is the regression check in one command.
func TestFloorsPreset(t *testing.T) {
	c, err := parseFlags([]string{"-floors"})
	if err != nil {
		t.Fatal(err)
	}
	if c.rounds != 5 || c.baseline != "HEAD" || strings.Join(c.workloads, ",") != "tree4k,1gib,small,large" ||
		strings.Join(c.tools, ",") != floorsTools {
		t.Errorf("-floors gave rounds %d, baseline %q, workloads %v, tools %v", c.rounds, c.baseline, c.workloads, c.tools)
	}
	c, err = parseFlags([]string{"-floors", "-baseline-rev", "abc123", "-rounds", "8"})
	if err != nil || c.baseline != "abc123" || c.rounds != 8 {
		t.Errorf("explicit flags did not win over -floors: %v %q %d", err, c.baseline, c.rounds)
	}
	if _, err := parseFlags([]string{"-floors", "-quick"}); err == nil {
		t.Error("-floors with -quick was accepted")
	}
}
