//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// cell is one tool on one workload in one cache condition.
type cell struct {
	Workload  string      `json:"workload"`
	Condition string      `json:"condition"`
	Tool      string      `json:"tool"`
	Runs      []runResult `json:"runs"`
	Median    float64     `json:"median_s"`
	Min       float64     `json:"min_s"`
	RatioCp   float64     `json:"ratio_vs_cp,omitempty"`           // of medians
	RatioOff  float64     `json:"ratio_vs_fastcopy_off,omitempty"` // of medians
	PeakRSS   int64       `json:"peak_rss_kib"`
	OtherCPU  float64     `json:"other_cpu_median"` // see runResult.OtherCPU
	// PairedWall and PairedCPU compare a fastcopy mode with the same mode
	// of the -baseline-rev build: the median over rounds of each round's
	// ratio, new over base, of wall and of CPU time. A round's two runs
	// are close in time, so a pair sees about the same machine; a ratio of
	// the two medians would mix rounds that saw different ones.
	PairedWall float64 `json:"paired_wall_vs_base,omitempty"`
	PairedCPU  float64 `json:"paired_cpu_vs_base,omitempty"`
	Pairs      int     `json:"pairs,omitempty"`
	// Disk holds the medians, field by field, of the runs' disk counters
	// (-hdd-source); ModelVsFloor is the median modelled disk time over the
	// physical-order reader's.
	Disk         *diskCounters `json:"disk_median,omitempty"`
	ModelVsFloor float64       `json:"model_vs_floor,omitempty"`
	Unsettled    int           `json:"unsettled_runs"` // runs started before the CPU was quiet
	Retried      int           `json:"retried_runs"`   // disturbed attempts thrown away
	Err          string        `json:"error,omitempty"`
}

type workloadInfo struct {
	Name  string `json:"name"`
	Desc  string `json:"description"`
	Files int    `json:"files"`
	Bytes int64  `json:"bytes"`
}

type toolInfo struct {
	Name    string `json:"name"`
	Label   string `json:"label"`
	Command string `json:"command"`
	Version string `json:"version"`
}

// machine describes where the numbers were taken.
type machine struct {
	CPU       string            `json:"cpu"`
	Cores     int               `json:"cores"`
	Virtual   bool              `json:"virtual"`
	MemoryGiB float64           `json:"memory_gib"`
	Kernel    string            `json:"kernel"`
	OS        string            `json:"os"`
	WorkDir   string            `json:"work_dir"`
	WorkFS    string            `json:"work_fs"`
	Go        string            `json:"go"`
	Fastcopy  string            `json:"fastcopy"`
	Versions  map[string]string `json:"versions"`
}

type report struct {
	Machine    machine        `json:"machine"`
	Started    string         `json:"started"`
	Elapsed    float64        `json:"elapsed_s"`
	Args       string         `json:"args"`
	Scale      float64        `json:"scale"`
	Seed       uint64         `json:"seed"`
	Rounds     int            `json:"rounds"`
	Conditions []string       `json:"conditions"`
	Settle     string         `json:"settle"`
	MaxOther   float64        `json:"max_other_cpu"`
	Retries    int            `json:"retries"`
	Nice       int            `json:"nice"`
	SlowSource string         `json:"slow_source,omitempty"`
	HDDSource  string         `json:"hdd_source,omitempty"`
	Notes      []string       `json:"notes,omitempty"`
	Workloads  []workloadInfo `json:"workloads"`
	Tools      []toolInfo     `json:"tools"`
	Results    []*cell        `json:"results"`
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// computeRatios fills in each cell's statistics and its ratios against
// cp -a and fastcopy --verify=off of the same workload and condition.
func (r *report) computeRatios() {
	find := func(w, c, t string) *cell {
		for _, x := range r.Results {
			if x.Workload == w && x.Condition == c && x.Tool == t && x.Err == "" && len(x.Runs) > 0 {
				return x
			}
		}
		return nil
	}
	for _, c := range r.Results {
		var secs, other []float64
		for _, run := range c.Runs {
			secs = append(secs, run.Seconds)
			other = append(other, run.OtherCPU)
			c.PeakRSS = max(c.PeakRSS, run.MaxRSSKiB)
			if !run.Quiet {
				c.Unsettled++
			}
			c.Retried += run.Retries
		}
		if len(secs) > 0 {
			c.Median, c.Min = median(secs), slices.Min(secs)
			c.OtherCPU = median(other)
		}
		c.Disk = medianDisk(c.Runs)
	}
	for _, c := range r.Results {
		if c.Err != "" || len(c.Runs) == 0 {
			continue
		}
		if cp := find(c.Workload, c.Condition, "cp"); cp != nil {
			c.RatioCp = c.Median / cp.Median
		}
		if off := find(c.Workload, c.Condition, "fastcopy-off"); off != nil {
			c.RatioOff = c.Median / off.Median
		}
		if base := find(c.Workload, c.Condition, basePrefix+c.Tool); base != nil {
			c.pairWith(base)
		}
		if fl := find(c.Workload, c.Condition, "physread"); fl != nil && fl.Disk != nil && c.Disk != nil && fl.Disk.ModelS > 0 {
			c.ModelVsFloor = c.Disk.ModelS / fl.Disk.ModelS
		}
	}
}

// basePrefix names the -baseline-rev build's modes: base-fastcopy-off is
// fastcopy-off built at the baseline.
const basePrefix = "base-"

// pairWith sets c's paired ratios against base, the same mode at the
// baseline: round i of one with round i of the other. Runs are appended
// in round order and a cell stops at its first failure, so the first
// min(len) rounds of the two are the rounds both completed.
func (c *cell) pairWith(base *cell) {
	var wall, cpu []float64
	for i := 0; i < len(c.Runs) && i < len(base.Runs); i++ {
		n, b := c.Runs[i], base.Runs[i]
		if b.Seconds > 0 {
			wall = append(wall, n.Seconds/b.Seconds)
		}
		if b.CPUSeconds > 0 && n.CPUSeconds > 0 {
			cpu = append(cpu, n.CPUSeconds/b.CPUSeconds)
		}
	}
	c.Pairs = len(wall)
	c.PairedWall, c.PairedCPU = median(wall), median(cpu)
}

// medianDisk is the field-by-field median of the runs' disk counters, or
// nil when the runs have none.
func medianDisk(runs []runResult) *diskCounters {
	var xs [8][]float64
	for _, r := range runs {
		if d := r.Disk; d != nil {
			for i, v := range []float64{float64(d.Reads), float64(d.ReadBytes), float64(d.SeqReads), float64(d.Seeks), d.ModelS, d.SeekS, d.XferS, d.LateS} {
				xs[i] = append(xs[i], v)
			}
		}
	}
	if len(xs[0]) == 0 {
		return nil
	}
	return &diskCounters{
		Reads: int64(median(xs[0])), ReadBytes: int64(median(xs[1])), SeqReads: int64(median(xs[2])), Seeks: int64(median(xs[3])),
		ModelS: median(xs[4]), SeekS: median(xs[5]), XferS: median(xs[6]), LateS: median(xs[7]),
	}
}

func (r *report) label(tool string) string {
	for _, t := range r.Tools {
		if t.Name == tool {
			return t.Label
		}
	}
	return tool
}

// writeMarkdown prints the machine, the method and one table per workload.
func (r *report) writeMarkdown(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "## fastcopy benchmark results\n\n")
	virt := ""
	if m.Virtual {
		virt = ", virtual machine"
	}
	fmt.Fprintf(w, "- Machine: %d cores (%s%s), %.1f GiB RAM, Linux %s, %s\n", m.Cores, m.CPU, virt, m.MemoryGiB, m.Kernel, m.OS)
	fmt.Fprintf(w, "- Work dir: %s on %s\n", m.WorkDir, m.WorkFS)
	if r.SlowSource != "" {
		fmt.Fprintf(w, "- Slow source: %s\n", r.SlowSource)
	}
	if r.HDDSource != "" {
		fmt.Fprintf(w, "- HDD source: %s\n", r.HDDSource)
	}
	fmt.Fprintf(w, "- fastcopy %s, %s\n", m.Fastcopy, m.Go)
	for _, t := range r.Tools {
		if t.Version != "" && !strings.HasPrefix(t.Name, "fastcopy") {
			fmt.Fprintf(w, "- %s: %s\n", t.Name, t.Version)
		}
	}
	fmt.Fprintf(w, "- Run: `go run ./benchmarks %s` (scale %g, seed %d), %d interleaved rounds, total time %.0f s\n",
		r.Args, r.Scale, r.Seed, r.Rounds, r.Elapsed)
	fmt.Fprintf(w, "- Each time is the tool plus a syncfs of the destination; median and min of the rounds; ratios are of medians\n")
	if r.Nice != 0 {
		fmt.Fprintf(w, "- Tools ran under `nice -n %d`\n", r.Nice)
	}
	fmt.Fprintf(w, "- other CPU: median share of the machine's CPU used during a run by anything but the tool (other processes, kernel writeback); "+
		"each run waits up to %s for a quiet CPU; a run that saw more than %.0f%% other CPU was repeated up to %d times (retried: attempts thrown away; unsettled: kept runs that began on a busy CPU)\n",
		r.Settle, r.MaxOther*100, r.Retries)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "- Note: %s\n", n)
	}
	for _, wl := range r.Workloads {
		fmt.Fprintf(w, "\n### %s: %s\n\n%s, %s\n\n", wl.Name, wl.Desc, plural(wl.Files, "file"), humanBytes(wl.Bytes))
		if r.HDDSource != "" {
			r.writeDiskTable(w, wl.Name)
			continue
		}
		fmt.Fprintf(w, "| condition | tool | median s | min s | vs cp -a | vs fastcopy off | peak RSS | other CPU |\n")
		fmt.Fprintf(w, "|---|---|---:|---:|---:|---:|---:|---:|\n")
		for _, c := range r.Results {
			if c.Workload != wl.Name {
				continue
			}
			if c.Err != "" || len(c.Runs) == 0 {
				fmt.Fprintf(w, "| %s | %s | failed: %s | | | | | |\n", c.Condition, r.label(c.Tool), mdEscape(firstLine(c.Err)))
				continue
			}
			rss := "n/a"
			if c.PeakRSS > 0 {
				rss = humanBytes(c.PeakRSS * kib)
			}
			other := fmt.Sprintf("%.0f%%", c.OtherCPU*100)
			if c.Retried > 0 {
				other += fmt.Sprintf(", %d retried", c.Retried)
			}
			if c.Unsettled > 0 {
				other += fmt.Sprintf(", %d unsettled", c.Unsettled)
			}
			fmt.Fprintf(w, "| %s | %s | %.3f | %.3f | %s | %s | %s | %s |\n", c.Condition, r.label(c.Tool),
				c.Median, c.Min, ratio(c.RatioCp), ratio(c.RatioOff), rss, other)
		}
	}
	r.writePaired(w)
	fmt.Fprintf(w, "\nCommand lines:\n\n")
	for _, t := range r.Tools {
		fmt.Fprintf(w, "- %s: `%s`\n", t.Label, t.Command)
	}
}

// writePaired prints, when the run had a baseline, each fastcopy mode
// against the same mode of the baseline build: paired medians of wall and
// CPU time, new over base (pairWith). A cell is a change only where it
// lies outside the spread of an A/A run (-rev X -baseline-rev X).
func (r *report) writePaired(w io.Writer) {
	var rows []*cell
	for _, c := range r.Results {
		if c.Pairs > 0 {
			rows = append(rows, c)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\n### Side by side with the baseline\n\n")
	fmt.Fprintf(w, "Each ratio is the median over rounds of the round's new/base ratio; below 1 is faster.\n\n")
	fmt.Fprintf(w, "| workload | condition | mode | median s | base median s | wall new/base | CPU new/base | rounds |\n")
	fmt.Fprintf(w, "|---|---|---|---:|---:|---:|---:|---:|\n")
	for _, c := range rows {
		base := 0.0
		for _, x := range r.Results {
			if x.Workload == c.Workload && x.Condition == c.Condition && x.Tool == basePrefix+c.Tool {
				base = x.Median
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.3f | %.3f | %.2f | %s | %d |\n", c.Workload, c.Condition, r.label(c.Tool),
			c.Median, base, c.PairedWall, pairedCPU(c.PairedCPU), c.Pairs)
	}
}

func pairedCPU(x float64) string {
	if x == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", x)
}

// writeDiskTable prints one workload's table for -hdd-source: beside the
// wall time, the emulated disk's counters (medians of the rounds), which do
// not depend on how busy the CPU was.
func (r *report) writeDiskTable(w io.Writer, workload string) {
	fmt.Fprintf(w, "| tool | median s | min s | seeks | reads | read | modelled disk s | of it seeking s | modelled vs floor | other CPU |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range r.Results {
		if c.Workload != workload {
			continue
		}
		if c.Err != "" || len(c.Runs) == 0 || c.Disk == nil {
			fmt.Fprintf(w, "| %s | failed: %s | | | | | | | | |\n", r.label(c.Tool), mdEscape(firstLine(c.Err)))
			continue
		}
		d := c.Disk
		fmt.Fprintf(w, "| %s | %.1f | %.1f | %s | %s | %s | %.1f | %.1f | %s | %.0f%% |\n", r.label(c.Tool), c.Median, c.Min,
			groupDigits(int(d.Seeks)), groupDigits(int(d.Reads)), humanBytes(d.ReadBytes), d.ModelS, d.SeekS, ratio(c.ModelVsFloor), c.OtherCPU*100)
	}
}

func ratio(x float64) string {
	if x == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2fx", x)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	if len(l) > 200 {
		l = l[:200] + "..."
	}
	return l
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func groupDigits(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return groupDigits(n) + " " + what + "s"
}

func humanBytes(n int64) string {
	switch {
	case n >= gib:
		return fmt.Sprintf("%.2f GiB", float64(n)/gib)
	case n >= mib:
		return fmt.Sprintf("%.1f MiB", float64(n)/mib)
	case n >= kib:
		return fmt.Sprintf("%.1f KiB", float64(n)/kib)
	}
	return fmt.Sprintf("%d B", n)
}

func (r *report) writeJSON(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// describeMachine gathers what the report says about the machine.
func describeMachine(ctx context.Context, work string, tools []*tool, fastcopyVersion string) machine {
	m := machine{Cores: runtime.NumCPU(), Go: runtime.Version(), Fastcopy: fastcopyVersion, WorkDir: work, Versions: map[string]string{}}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(line, ":")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if k == "model name" && m.CPU == "" {
				m.CPU = v
			}
			if k == "flags" && hasWord(v, "hypervisor") {
				m.Virtual = true
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb float64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %f kB", &kb); err == nil {
			m.MemoryGiB = kb / (1 << 20)
		}
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Machine[:])
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
				m.OS = strings.Trim(v, `"`)
			}
		}
	}
	m.WorkFS = describeFS(work)
	for _, t := range tools {
		if t.name == "physread" {
			continue // part of the harness
		}
		m.Versions[t.name] = toolVersion(ctx, t.path[len(t.path)-1])
		if t.name == "cp+jdupes" {
			m.Versions[t.name] = toolVersion(ctx, t.path[0]) + "; " + toolVersion(ctx, t.path[1])
		}
	}
	return m
}

// describeFS names the filesystem holding dir: type, device, mount options,
// and whether the block device says it is rotational.
func describeFS(dir string) string {
	m, ok := mountOfDir(dir)
	if !ok {
		return "unknown filesystem"
	}
	desc := fmt.Sprintf("%s (%s mounted on %s, %s)", m.fsType, m.source, m.point, m.opts)
	rot := "/sys/dev/block/" + m.devNum + "/queue/rotational"
	if _, err := os.Stat(rot); err != nil {
		rot = "/sys/dev/block/" + m.devNum + "/../queue/rotational"
	}
	if v, err := os.ReadFile(rot); err == nil {
		desc += ", block device rotational=" + strings.TrimSpace(string(v))
	}
	// An ext4 without a journal allocates inodes differently (it skips
	// recently deleted ones), which matters to small-file runs.
	if v, err := os.ReadFile("/sys/fs/ext4/" + filepath.Base(m.source) + "/journal_task"); m.fsType == "ext4" && err == nil && strings.TrimSpace(string(v)) == "<none>" {
		desc += ", no journal"
	}
	return desc
}

// Chart colours, in tool order.
var palette = map[string]string{
	"fastcopy":       "#1f4e9c",
	"fastcopy-cache": "#3f7fd6",
	"fastcopy-off":   "#8fb8f0",
	"cp":             "#6b6b6b",
	"rsync":          "#e08a1e",
	"rclone":         "#8a4fbf",
	"cp+jdupes":      "#a0522d",
}

// writeCharts writes one SVG bar chart per workload: a group of bars per
// condition, one bar per tool at its median, a black tick at its min.
func (r *report) writeCharts(dir string) (int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	n := 0
	for _, wl := range r.Workloads {
		var cells []*cell
		for _, c := range r.Results {
			if c.Workload == wl.Name && c.Err == "" && len(c.Runs) > 0 {
				cells = append(cells, c)
			}
		}
		if len(cells) == 0 {
			continue
		}
		svg := r.chart(wl, cells)
		if err := os.WriteFile(filepath.Join(dir, wl.Name+".svg"), []byte(svg), 0o644); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func (r *report) chart(wl workloadInfo, cells []*cell) string {
	var conds, tools []string
	top := 0.0
	for _, c := range cells {
		if !slices.Contains(conds, c.Condition) {
			conds = append(conds, c.Condition)
		}
		if !slices.Contains(tools, c.Tool) {
			tools = append(tools, c.Tool)
		}
		top = max(top, c.Median)
	}
	step := niceStep(top / 5)
	top = math.Ceil(top/step) * step

	const (
		barW, barGap, groupGap = 30.0, 6.0, 44.0
		left, right, plotTop   = 64.0, 24.0, 52.0
		plotH, legendRow       = 240.0, 18.0
	)
	groupW := float64(len(tools))*(barW+barGap) - barGap
	width := math.Max(left+float64(len(conds))*groupW+float64(len(conds)-1)*groupGap+right, 780)
	plotBottom := plotTop + plotH
	height := plotBottom + 40 + float64(len(tools)+1)*legendRow + 8
	y := func(v float64) float64 { return plotBottom - v/top*plotH }

	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&s, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&s, `<text x="%.0f" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", left, xmlEscape(wl.Name+": "+wl.Desc))
	fmt.Fprintf(&s, `<text x="%.0f" y="40" fill="#444">%s, %s; seconds including the final sync, median of %d rounds; lower is better</text>`+"\n",
		left, plural(wl.Files, "file"), humanBytes(wl.Bytes), r.Rounds)
	for v := 0.0; v <= top+step/2; v += step {
		fmt.Fprintf(&s, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, width-right, y(v), y(v))
		fmt.Fprintf(&s, `<text x="%.0f" y="%.1f" text-anchor="end" fill="#444">%s</text>`+"\n", left-6, y(v)+4, trimFloat(v))
	}
	fmt.Fprintf(&s, `<text transform="translate(16 %.0f) rotate(-90)" text-anchor="middle" fill="#444">seconds</text>`+"\n", plotTop+plotH/2)
	for gi, cond := range conds {
		x0 := left + float64(gi)*(groupW+groupGap) + 10
		for ti, t := range tools {
			var c *cell
			for _, x := range cells {
				if x.Condition == cond && x.Tool == t {
					c = x
				}
			}
			if c == nil {
				continue
			}
			x := x0 + float64(ti)*(barW+barGap)
			fmt.Fprintf(&s, `<rect x="%.1f" y="%.1f" width="%.0f" height="%.1f" fill="%s"><title>%s %s: median %.3f s, min %.3f s</title></rect>`+"\n",
				x, y(c.Median), barW, plotBottom-y(c.Median), colour(t), xmlEscape(r.label(t)), cond, c.Median, c.Min)
			fmt.Fprintf(&s, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="black" stroke-width="2"/>`+"\n", x-2, x+barW+2, y(c.Min), y(c.Min))
			fmt.Fprintf(&s, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="10">%s</text>`+"\n", x+barW/2, y(c.Median)-4, fmtSeconds(c.Median))
		}
		fmt.Fprintf(&s, `<text x="%.1f" y="%.0f" text-anchor="middle" font-weight="bold">%s</text>`+"\n", x0+groupW/2, plotBottom+18, cond)
	}
	fmt.Fprintf(&s, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#444"/>`+"\n", left, width-right, plotBottom, plotBottom)
	ly := plotBottom + 40
	for i, t := range tools {
		yy := ly + float64(i)*legendRow
		fmt.Fprintf(&s, `<rect x="%.0f" y="%.0f" width="14" height="12" fill="%s"/>`+"\n", left, yy-10, colour(t))
		fmt.Fprintf(&s, `<text x="%.0f" y="%.0f">%s</text>`+"\n", left+20, yy, xmlEscape(r.label(t)))
	}
	yy := ly + float64(len(tools))*legendRow
	fmt.Fprintf(&s, `<line x1="%.0f" x2="%.0f" y1="%.0f" y2="%.0f" stroke="black" stroke-width="2"/>`+"\n", left-1, left+15, yy-4, yy-4)
	fmt.Fprintf(&s, `<text x="%.0f" y="%.0f">min of the rounds (bar: median)</text>`+"\n", left+20, yy)
	s.WriteString("</svg>\n")
	return s.String()
}

func colour(tool string) string {
	if c, ok := palette[tool]; ok {
		return c
	}
	return "#999"
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

func fmtSeconds(v float64) string {
	switch {
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func xmlEscape(s string) string { return xmlEscaper.Replace(s) }
