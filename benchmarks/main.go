//go:build linux

// Command benchmarks runs fastcopy side by side with cp, rsync and rclone on
// generated datasets and reports the medians as markdown, JSON and SVG
// charts. Run it from the repository root as root (to drop caches):
//
//	go run ./benchmarks -quick
//	go run ./benchmarks -workloads tree4k,1gib -tools fastcopy,fastcopy-off,cp -rounds 5
//
// See docs/benchmarks.md for the method and the latest results.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

type config struct {
	work      string
	repo      string
	rev       string
	fastcopy  string
	baseline  string
	jsonPath  string
	chartsDir string
	scale     float64
	seed      uint64
	rounds    int
	workloads []string
	tools     []string
	conds     []string
	quick     bool
	floors    bool
	slow      bool
	slowBPS   int64
	slowIOPS  int64
	hdd       bool
	hddsim    string
	settle    time.Duration
	quietBusy float64
	maxOther  float64
	retries   int
	nice      int
	list      bool
}

func main() { os.Exit(run()) }

func run() int {
	if len(os.Args) == 3 && os.Args[1] == "-physread" { // the physread tool
		if err := physRead(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "benchmarks: error:", err)
			return 1
		}
		return 0
	}
	if len(os.Args) >= 2 && os.Args[1] == "offload" { // several destinations (offload.go)
		if err := runOffload(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "benchmarks: error:", err)
			return 1
		}
		return 0
	}
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchmarks: error:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cfg.list {
		list(cfg)
		return 0
	}
	b := &bench{cfg: cfg, ctx: ctx, start: time.Now()}
	if err := b.run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchmarks: error:", err)
		return 1
	}
	return 0
}

// parseFlags reads the command line into a config, the -quick and
// -hdd-source presets applied to the flags not given explicitly.
func parseFlags(args []string) (*config, error) {
	fs := flag.NewFlagSet("benchmarks", flag.ContinueOnError)
	c := &config{}
	var workloadList, toolList, condList string
	fs.StringVar(&c.work, "work", "/var/tmp/fastcopy-bench", "work directory for datasets, copies and the built binary (the destination's filesystem)")
	fs.StringVar(&c.repo, "repo", ".", "fastcopy repository to build from")
	fs.StringVar(&c.rev, "rev", "", "build this git revision (exported with git archive) instead of the working tree")
	fs.StringVar(&c.fastcopy, "fastcopy", "", "use this fastcopy binary instead of building one")
	fs.StringVar(&c.baseline, "baseline-rev", "", "also run every chosen fastcopy mode built from this git revision, interleaved with the others (tools named base-MODE), to compare two versions side by side")
	fs.StringVar(&c.jsonPath, "json", "", "write results as JSON to this file (default WORK/results.json)")
	fs.StringVar(&c.chartsDir, "charts", "", "write one SVG chart per workload into this directory (default WORK/charts)")
	fs.Float64Var(&c.scale, "scale", 1, "scale file counts and large-file sizes by this factor")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the generated datasets")
	fs.IntVar(&c.rounds, "rounds", 3, "interleaved rounds per workload and condition")
	fs.StringVar(&workloadList, "workloads", "", "comma-separated workloads (default: all but tree4k and 1gib): "+workloadNames())
	fs.StringVar(&toolList, "tools", "", "comma-separated tools (default: every installed one but fastcopy-cache and fastcopy-noverify): "+toolNames())
	fs.StringVar(&condList, "conditions", "warm,cold", "comma-separated cache conditions: warm, cold")
	fs.BoolVar(&c.quick, "quick", false, "reduced run: scale 0.1, 3 rounds, tree4k and 1gib, two fastcopy modes and cp, no settling or retries (flags given explicitly win)")
	fs.BoolVar(&c.floors, "floors", false, "the regression check: tree4k, 1gib, small and large, every fastcopy mode and cp, 5 rounds, side by side with -baseline-rev (default HEAD), with paired ratios (flags given explicitly win)")
	fs.BoolVar(&c.list, "list", false, "print the workloads (files, bytes at -scale) and the tools, and exit")
	fs.BoolVar(&c.slow, "slow-source", false, "put the source on a throttled loop device (root, cgroup blkio or io.max)")
	fs.Int64Var(&c.slowBPS, "slow-bps", 30_000_000, "read bandwidth limit of the slow source, bytes per second")
	fs.Int64Var(&c.slowIOPS, "slow-iops", 150, "read IOPS limit of the slow source")
	fs.BoolVar(&c.hdd, "hdd-source", false, "put the source on an emulated 7200 rpm USB hard disk (hddsim: root, FUSE, python3-fusepy) and report each run's seeks and modelled disk time; cold only; defaults: -scale 0.25, -workloads small,bimodal, -tools fastcopy,fastcopy-off,cp,rsync,physread, -retries 0")
	fs.StringVar(&c.hddsim, "hddsim", "", "hddsim.sh for -hdd-source (default: on PATH, else ../shared/tools/hddsim/hddsim.sh beside -repo)")
	fs.DurationVar(&c.settle, "settle", 10*time.Second, "before each run, wait up to this long for a quiet CPU (0: do not wait)")
	fs.Float64Var(&c.quietBusy, "quiet-busy", 0.15, "the CPU counts as quiet when at most this fraction of it is busy over half a second")
	fs.Float64Var(&c.maxOther, "max-other", 0.5, "repeat a run when more than this share of the CPU went to other work during it")
	fs.IntVar(&c.nice, "nice", -10, "run the tools at this nice value (as root; 0 leaves it alone), so that other work on a shared machine disturbs them less")
	fs.IntVar(&c.retries, "retries", 1, "how often a disturbed run is repeated before its last attempt is kept")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	lists := &listFlags{workloads: workloadList, tools: toolList, conds: condList}
	if c.quick && c.floors {
		return nil, fmt.Errorf("-quick and -floors are two presets: choose one")
	}
	if c.quick {
		c.quickDefaults(set, lists)
	}
	if c.floors {
		c.floorsDefaults(set, lists)
	}
	if c.hdd {
		if err := c.hddDefaults(set, lists); err != nil {
			return nil, err
		}
	}
	if err := c.setLists(lists); err != nil {
		return nil, err
	}
	if c.rounds < 1 || c.scale <= 0 {
		return nil, fmt.Errorf("-rounds and -scale must be positive")
	}
	if err := c.setPaths(); err != nil {
		return nil, err
	}
	return c, nil
}

// setPaths makes the work directory absolute and puts the JSON file and
// the charts in it unless -json and -charts say otherwise.
func (c *config) setPaths() error {
	var err error
	if c.work, err = filepath.Abs(c.work); err != nil {
		return err
	}
	if c.jsonPath == "" {
		c.jsonPath = filepath.Join(c.work, "results.json")
	}
	if c.chartsDir == "" {
		c.chartsDir = filepath.Join(c.work, "charts")
	}
	return nil
}

// listFlags are the comma-separated -workloads, -tools and -conditions, as
// given or as a preset (-quick, -hdd-source) sets them.
type listFlags struct {
	workloads, tools, conds string
}

// quickDefaults applies -quick to the flags not given explicitly (set).
func (c *config) quickDefaults(set map[string]bool, l *listFlags) {
	if !set["scale"] {
		c.scale = 0.1
	}
	if !set["rounds"] {
		c.rounds = 3
	}
	if !set["workloads"] {
		l.workloads = "tree4k,1gib"
	}
	if !set["tools"] {
		l.tools = "fastcopy,fastcopy-off,cp"
	}
	if !set["settle"] {
		c.settle = 0 // a smoke test: no waiting for a quiet machine
	}
	if !set["retries"] {
		c.retries = 0
	}
}

// floorsTools are every fastcopy mode and cp: the regression check runs
// them all, since a change can slow one mode and not another.
const floorsTools = "fastcopy,fastcopy-cache,fastcopy-noverify,fastcopy-off,fastcopy-nosync-cache,fastcopy-nosync-off,cp"

// floorsDefaults applies -floors to the flags not given explicitly (set):
// the workloads the copier's speed floors are set on, every fastcopy mode,
// five rounds, and a baseline to pair each mode with.
func (c *config) floorsDefaults(set map[string]bool, l *listFlags) {
	if !set["rounds"] {
		c.rounds = 5
	}
	if !set["workloads"] {
		l.workloads = "tree4k,1gib,small,large"
	}
	if !set["tools"] {
		l.tools = floorsTools
	}
	if !set["baseline-rev"] {
		c.baseline = "HEAD"
	}
}

// hddDefaults applies -hdd-source to the flags not given explicitly (set)
// and runs the cold condition only.
func (c *config) hddDefaults(set map[string]bool, l *listFlags) error {
	if c.slow {
		return fmt.Errorf("-hdd-source and -slow-source are two different sources: choose one")
	}
	if !set["scale"] {
		c.scale = 0.25 // a cold run of one tool stays under a minute
	}
	if !set["workloads"] {
		l.workloads = "small,bimodal"
	}
	if !set["tools"] {
		l.tools = "fastcopy,fastcopy-off,cp,rsync,physread"
	}
	if !set["retries"] {
		c.retries = 0 // the modelled disk time is the measure, and a busy CPU does not move it
	}
	l.conds = "cold"
	return nil
}

// setLists splits the list flags into c's workloads (all but the extra
// ones by default), tools and conditions, refusing names it does not know.
func (c *config) setLists(l *listFlags) error {
	c.workloads = splitList(l.workloads)
	if len(c.workloads) == 0 {
		for _, w := range workloads {
			if !w.extra {
				c.workloads = append(c.workloads, w.name)
			}
		}
	}
	for _, w := range c.workloads {
		if _, ok := findWorkload(w); !ok {
			return fmt.Errorf("unknown workload %q (have %s)", w, workloadNames())
		}
	}
	c.tools = splitList(l.tools)
	for _, t := range c.tools {
		if !slices.ContainsFunc(allTools(), func(x *tool) bool { return x.name == t }) {
			return fmt.Errorf("unknown tool %q (have %s)", t, toolNames())
		}
	}
	c.conds = splitList(l.conds)
	for _, cd := range c.conds {
		if cd != "warm" && cd != "cold" {
			return fmt.Errorf("unknown condition %q (have warm, cold)", cd)
		}
	}
	return nil
}

// list prints what -workloads and -tools can name.
func list(cfg *config) {
	fmt.Printf("workloads at scale %g:\n", cfg.scale)
	for _, w := range workloads {
		files, bytes := w.build(cfg.scale, cfg.seed).totals()
		fmt.Printf("  %-8s %12s %11s  %s\n", w.name, plural(files, "file"), humanBytes(bytes), w.desc)
	}
	fmt.Println("tools:")
	for _, t := range allTools() {
		fmt.Printf("  %-15s %s\n", t.name, t.commandLine())
	}
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func workloadNames() string {
	var n []string
	for _, w := range workloads {
		n = append(n, w.name)
	}
	return strings.Join(n, ",")
}

func toolNames() string {
	var n []string
	for _, t := range allTools() {
		n = append(n, t.name)
	}
	return strings.Join(n, ",")
}

// bench is one invocation of the harness.
type bench struct {
	cfg      *config
	ctx      context.Context
	start    time.Time
	root     bool // can drop caches
	tools    []*tool
	version  string // of the fastcopy under test
	dataRoot string
	dstRoot  string // parent of the destination, synced after each run
	slow     *slowSource
	hdd      *hddSource
	rss      *rssProbe
	notes    []string // printed with the report: what was skipped and why
	results  []*cell

	// warmSrc is the source read into the page cache since the last full
	// cache drop: warm runs after the first need not read it again.
	warmSrc string
	// rerunReady holds the tools whose finished copy for the rerun
	// workload exists (see runDirs).
	rerunReady map[string]bool
	// discardMnt is the mount point of the destination's filesystem when
	// it is mounted with online discard (see remove), else "".
	discardMnt string
	trimmed    bool // remove paused discard: trim at the end
	// The trash (see trash.go): many-file destinations wait there to be
	// deleted, when freeWindow (ext4's "recently freed" time) is not 0.
	trashDir   string
	trashSeq   int
	trashBytes int64
	freeWindow time.Duration
	freedAt    time.Time // when the trash was last emptied (zero once waited for)
	// curFiles and curBytes are the size of the dataset being run.
	curFiles int
	curBytes int64

	fullDropNoted bool
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%6.1fs  %s\n", time.Since(b.start).Seconds(), fmt.Sprintf(format, args...))
}

func (b *bench) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	b.notes = append(b.notes, msg)
	b.logf("note: %s", msg)
}

// run prepares the work directory, the tools, the datasets and the source
// (slow or hdd when asked), runs every chosen workload and reports.
func (b *bench) run() error {
	cfg := b.cfg
	if err := b.prepareWork(); err != nil {
		return err
	}
	if b.root {
		if b.discardMnt = discardMount(b.dstRoot); b.discardMnt != "" {
			b.note("%s is mounted with online discard: each wipe of a destination pauses it (remount nodiscard, delete, remount discard), since there every unlink waits for the device to discard the file's blocks (about 10 s for the 50,000-file tree); the runs themselves see the filesystem as mounted, and one fstrim at the end discards what the wipes freed", b.discardMnt)
			defer b.trim()
		}
	}
	if err := b.selectTools(); err != nil {
		return err
	}
	b.rss = newRSSProbe(b.ctx, cfg.work)
	if b.rss.time == "" {
		b.note("GNU time is not installed: peak RSS comes from the harness's rusage of each child and is left out where it may be the harness's own")
	}
	sel, sets, setList := b.selectWorkloads()
	if cfg.slow {
		s, err := b.setupSlow(setList)
		if err != nil {
			return err
		}
		if s != nil {
			defer s.close()
		}
	}
	if cfg.hdd {
		h, err := b.setupHDD(sel, setList)
		if err != nil {
			return err
		}
		defer h.close()
	}
	if len(cfg.conds) == 0 {
		return fmt.Errorf("no condition left to run")
	}
	dirs, err := b.ensureData(setList)
	if err != nil {
		return err
	}
	m := describeMachine(b.ctx, cfg.work, b.tools, b.version)
	if err := b.runWorkloads(sel, sets, dirs); err != nil {
		return err
	}
	_ = b.wipe(true)
	_ = b.emptyTrash()
	b.trim()
	return b.report(m, sel, sets)
}

// prepareWork notes whether caches can be dropped (leaving out the cold
// condition when not), creates the work and destination directories,
// empties a trash left by an interrupted run and notes the filesystem's
// window of recently freed inodes.
func (b *bench) prepareWork() error {
	cfg := b.cfg
	b.root = os.Geteuid() == 0
	if !b.root {
		b.note("not root: caches cannot be dropped, so the cold condition is skipped and warm runs may hit the ext4 recently-deleted-inode slowdown")
		cfg.conds = slices.DeleteFunc(cfg.conds, func(c string) bool { return c == "cold" })
	}
	if err := os.MkdirAll(cfg.work, 0o755); err != nil {
		return err
	}
	b.dataRoot = filepath.Join(cfg.work, "data")
	b.dstRoot = filepath.Join(cfg.work, "dst")
	if err := os.MkdirAll(b.dstRoot, 0o755); err != nil {
		return err
	}
	b.trashDir = filepath.Join(cfg.work, "trash")
	if err := b.remove(b.trashDir); err != nil { // left by an interrupted run
		return err
	}
	if win, why := recentWindow(b.dstRoot); win > 0 {
		b.freeWindow = win
		b.note("%s: it does not reuse inodes freed in the last 60 s (360 s while their table block is dirty), and every create steps over those still cached, so deleting a copy right before the next run slowed that run's creates (a quarter of fastcopy's CPU time and a fifth of cp's, 20,000 files, perf). Copies of 1,000 files or more are moved to a trash directory instead and deleted only when it passes %s (and at the end); the filesystem is then flushed and the next run waits %.0f s, until the freed inodes are no longer recent", why, humanBytes(trashBudget(cfg.work)), win.Seconds())
	}
	return nil
}

// selectWorkloads builds the chosen workloads' datasets: sets maps each
// workload to its dataset, setList holds each dataset once (workloads may
// share one: rerun copies the small-files tree).
func (b *bench) selectWorkloads() (sel []workload, sets map[string]*dataset, setList []*dataset) {
	cfg := b.cfg
	sets = map[string]*dataset{} // by workload name
	for _, name := range cfg.workloads {
		w, _ := findWorkload(name)
		d := w.build(cfg.scale, cfg.seed)
		if prev := findSet(setList, d.name); prev != nil {
			d = prev
		} else {
			setList = append(setList, d)
		}
		sel = append(sel, w)
		sets[w.name] = d
	}
	return sel, sets, setList
}

// setupSlow puts the datasets on a throttled source (-slow-source), which
// the caller closes, and leaves only the cold condition. It returns nil
// (with a note) where the slow source cannot be set up.
func (b *bench) setupSlow(setList []*dataset) (*slowSource, error) {
	cfg := b.cfg
	s, reason, err := setupSlowSource(b.ctx, cfg.work, setList, cfg.slowBPS, cfg.slowIOPS)
	if err != nil {
		return nil, fmt.Errorf("setting up the slow source: %w", err)
	}
	if reason != "" {
		b.note("-slow-source skipped: %s", reason)
		return nil, nil
	}
	b.slow = s
	b.dataRoot = filepath.Join(s.mnt, "data")
	b.logf("slow source: %s", s.desc)
	if slices.Contains(cfg.conds, "warm") {
		b.note("slow source: only the cold condition is run (a warm source would never touch the throttled device)")
	}
	cfg.conds = []string{"cold"}
	return s, nil
}

// setupHDD puts the datasets on the emulated hard disk (-hdd-source),
// which the caller closes.
func (b *bench) setupHDD(sel []workload, setList []*dataset) (*hddSource, error) {
	if slices.ContainsFunc(sel, func(w workload) bool { return w.rerun }) {
		return nil, fmt.Errorf("-hdd-source: the rerun workload reads no source data; leave it out")
	}
	h, reason, err := setupHDDSource(b.ctx, b.cfg, setList, b.logf)
	if err != nil {
		return nil, fmt.Errorf("setting up the hdd source: %w", err)
	}
	if reason != "" {
		return nil, fmt.Errorf("-hdd-source cannot run here: %s", reason)
	}
	b.hdd = h
	b.dataRoot = filepath.Join(h.mnt, "data")
	b.logf("hdd source: %s", h.desc)
	return h, nil
}

// ensureData generates (or finds) each dataset below the data root and
// returns their directories by dataset name.
func (b *bench) ensureData(setList []*dataset) (map[string]string, error) {
	dirs := map[string]string{} // by dataset name
	for _, d := range setList {
		dir, err := d.ensure(b.dataRoot, b.cfg.scale, b.cfg.seed, b.logf)
		if err != nil {
			return nil, err
		}
		dirs[d.name] = dir
	}
	return dirs, nil
}

// runWorkloads runs the workloads sel in turn. An interrupt ends the
// runs with a note, the results so far kept; another error is returned.
func (b *bench) runWorkloads(sel []workload, sets map[string]*dataset, dirs map[string]string) error {
	for _, w := range sel {
		d := sets[w.name]
		if err := b.runWorkload(w, d, dirs[d.name]); err != nil {
			if b.ctx.Err() == nil {
				return err
			}
			b.note("interrupted during %s: the results are partial", w.name)
			break
		}
	}
	return nil
}

// report prints the markdown tables and writes the JSON file and the charts.
func (b *bench) report(m machine, sel []workload, sets map[string]*dataset) error {
	cfg := b.cfg
	rep := &report{
		Machine: m, Started: b.start.UTC().Format(time.RFC3339), Elapsed: time.Since(b.start).Seconds(),
		Args: strings.Join(os.Args[1:], " "), Scale: cfg.scale, Seed: cfg.seed, Rounds: cfg.rounds,
		Conditions: cfg.conds, Settle: cfg.settle.String(), MaxOther: cfg.maxOther, Retries: cfg.retries,
		Nice: b.niceUsed(), Notes: b.notes, Results: b.results,
	}
	if b.slow != nil {
		rep.SlowSource = b.slow.desc
	}
	if b.hdd != nil {
		rep.HDDSource = b.hdd.desc
	}
	for _, w := range sel {
		f, n := sets[w.name].totals()
		rep.Workloads = append(rep.Workloads, workloadInfo{Name: w.name, Desc: w.desc, Files: f, Bytes: n})
	}
	for _, t := range b.tools {
		rep.Tools = append(rep.Tools, toolInfo{Name: t.name, Label: t.label, Command: t.commandLine(), Version: m.Versions[t.name]})
	}
	rep.computeRatios()
	rep.writeMarkdown(os.Stdout)
	if err := rep.writeJSON(cfg.jsonPath); err != nil {
		return err
	}
	charts, err := rep.writeCharts(cfg.chartsDir)
	if err != nil {
		return err
	}
	b.logf("wrote %s and %d charts in %s", cfg.jsonPath, charts, cfg.chartsDir)
	b.logf("total time %.1f s", time.Since(b.start).Seconds())
	return nil
}

func findSet(list []*dataset, name string) *dataset {
	for _, d := range list {
		if d.name == name {
			return d
		}
	}
	return nil
}

// selectTools resolves the chosen tools, building fastcopy if one of its
// modes is among them; tools that are not installed are skipped.
func (b *bench) selectTools() error {
	for _, t := range allTools() {
		if len(b.cfg.tools) > 0 && !slices.Contains(b.cfg.tools, t.name) || len(b.cfg.tools) == 0 && t.extra {
			continue
		}
		b.tools = append(b.tools, t)
	}
	var fcBin string
	if slices.ContainsFunc(b.tools, func(t *tool) bool { return slices.Contains(t.bins, "fastcopy") }) {
		if b.cfg.fastcopy != "" {
			p, err := filepath.Abs(b.cfg.fastcopy)
			if err != nil {
				return err
			}
			fcBin, b.version = p, "prebuilt "+p
		} else {
			b.logf("building fastcopy")
			var err error
			fcBin, b.version, err = buildFastcopy(b.ctx, b.cfg.repo, b.cfg.rev, filepath.Join(b.cfg.work, "bin"))
			if err != nil {
				return err
			}
		}
	}
	baseBin := ""
	if b.cfg.baseline != "" {
		var base []*tool
		for _, t := range b.tools {
			if slices.Contains(t.bins, "fastcopy") {
				c := *t
				c.name, c.label = basePrefix+t.name, t.label+" at "+b.cfg.baseline
				c.bins = []string{"fastcopy-base"}
				base = append(base, &c)
			}
		}
		if len(base) > 0 {
			b.logf("building fastcopy at %s", b.cfg.baseline)
			var err error
			if baseBin, _, err = buildFastcopy(b.ctx, b.cfg.repo, b.cfg.baseline, filepath.Join(b.cfg.work, "bin-base")); err != nil {
				return err
			}
			b.tools = append(b.tools, base...)
		}
	}
	b.tools = slices.DeleteFunc(b.tools, func(t *tool) bool {
		if slices.Equal(t.bins, []string{"fastcopy-base"}) {
			t.path = []string{baseBin}
			return false
		}
		if reason := t.resolve(fcBin); reason != "" {
			b.note("%s skipped: %s", t.label, reason)
			return true
		}
		return false
	})
	if len(b.tools) == 0 {
		return fmt.Errorf("no tool to run")
	}
	return nil
}

func (b *bench) dstDir() string { return filepath.Join(b.dstRoot, "out") }

// cacheDir holds the tools' per-user caches (XDG_CACHE_HOME): fastcopy keeps
// its hash cache there, and a cache left by an earlier run would let a
// "fresh" copy skip reading its source. It is emptied with the destination.
func (b *bench) cacheDir() string { return filepath.Join(b.dstRoot, "cache") }

// runDirs returns the destination and the cache directory of a run. The
// rerun workload gives each tool a finished copy of its own (and its own
// caches), made once by an untimed run of that tool and rerun onto in every
// round and condition: a no-change rerun leaves the copy as it found it
// (cp rewrites every file with the same bytes and metadata), so each round
// starts from the same state without deleting and recopying 12,000 files
// first.
func (b *bench) runDirs(w workload, t *tool) (dst, cache string) {
	if w.rerun {
		return filepath.Join(b.dstRoot, "rerun-"+t.name), filepath.Join(b.dstRoot, "rerun-cache-"+t.name)
	}
	return b.dstDir(), b.cacheDir()
}

func env(cache string) []string {
	return append(os.Environ(), "XDG_CACHE_HOME="+cache)
}

// wipe removes the destination and the tools' caches, and with rerun the
// tools' rerun copies.
func (b *bench) wipe(rerun bool) error {
	dirs := []string{b.dstDir(), b.cacheDir()}
	if rerun {
		for _, t := range b.tools {
			dst, cache := b.runDirs(workload{rerun: true}, t)
			dirs = append(dirs, dst, cache)
		}
		b.rerunReady = nil
	}
	return b.trash(b.curFiles, b.curBytes, dirs...)
}

func (b *bench) niceUsed() int {
	if b.root {
		return b.cfg.nice
	}
	return 0
}

// wrap prefixes a tool's command line with nice (when asked and root) and
// puts it in the slow source's cgroup (in -slow-source mode).
func (b *bench) wrap(argv []string) []string {
	if b.cfg.nice != 0 && b.root {
		argv = append([]string{"nice", "-n", strconv.Itoa(b.cfg.nice)}, argv...)
	}
	if b.slow != nil {
		argv = b.slow.wrap(argv)
	}
	return argv
}

// runWorkload runs every round of every condition for one workload, the
// tools interleaved (A B C A B C ...) so that drift on a noisy machine
// spreads over all of them.
func (b *bench) runWorkload(w workload, d *dataset, src string) error {
	var tools []*tool
	for _, t := range b.tools {
		if t.dupsOnly && !w.dups {
			continue
		}
		tools = append(tools, t)
	}
	files, bytes := d.totals()
	b.curFiles, b.curBytes = files, bytes
	hasLinks := slices.ContainsFunc(d.files, func(f fileSpec) bool { return f.target != "" })
	for _, cond := range b.cfg.conds {
		cells := map[string]*cell{}
		for _, t := range tools {
			c := &cell{Workload: w.name, Condition: cond, Tool: t.name}
			cells[t.name] = c
			b.results = append(b.results, c)
		}
		for r := 1; r <= b.cfg.rounds; r++ {
			for _, t := range roundOrder(tools, r) {
				c := cells[t.name]
				if c.Err != "" {
					continue
				}
				res, err := b.runOnce(w, cond, t, src)
				for try := 1; err == nil && try <= b.cfg.retries && res.OtherCPU > b.cfg.maxOther; try++ {
					b.logf("%s %s round %d: %s disturbed (%.3f s, other CPU %.0f%%), repeating", w.name, cond, r, t.label, res.Seconds, res.OtherCPU*100)
					res, err = b.runOnce(w, cond, t, src)
					res.Retries = try
				}
				if err == nil && r == 1 && !t.noCopy {
					dst, _ := b.runDirs(w, t)
					err = checkCopy(filepath.Join(dst, t.payload), files, bytes, !hasLinks && t.name != "rclone")
				}
				if err != nil {
					if b.ctx.Err() != nil {
						return b.ctx.Err()
					}
					c.Err = err.Error()
					b.logf("%s %s round %d: %s failed: %v", w.name, cond, r, t.label, err)
					continue
				}
				c.Runs = append(c.Runs, res)
				noisy := ""
				if !res.Quiet {
					noisy = "  (the CPU did not settle)"
				}
				disk := ""
				if res.Disk != nil {
					disk = fmt.Sprintf("  disk: %d seeks, %d reads, %s, modelled %.2f s (seek %.2f s)", res.Disk.Seeks, res.Disk.Reads, humanBytes(res.Disk.ReadBytes), res.Disk.ModelS, res.Disk.SeekS)
				}
				b.logf("%s %s round %d/%d: %-36s %7.3f s (sync %.3f s)  rss %s  other CPU %2.0f%%  prep %.1f s%s%s",
					w.name, cond, r, b.cfg.rounds, t.label, res.Seconds, res.SyncSeconds, humanBytes(res.MaxRSSKiB*kib), res.OtherCPU*100, res.PrepSeconds, disk, noisy)
			}
		}
	}
	return nil
}

// roundOrder is the order of the tools in round r: as listed in odd
// rounds, reversed in even ones. A place in the round is not neutral
// (what ran just before, how long since the trash was emptied), so no tool
// keeps the same one, and two tools compared side by side (a mode and its
// -baseline-rev build, listed apart) swap places every round.
func roundOrder(tools []*tool, r int) []*tool {
	if r%2 == 1 {
		return tools
	}
	rev := slices.Clone(tools)
	slices.Reverse(rev)
	return rev
}

// runResult is one timed run of one tool.
type runResult struct {
	Seconds     float64 `json:"seconds"`      // tool plus the final sync
	SyncSeconds float64 `json:"sync_seconds"` // the final sync alone
	MaxRSSKiB   int64   `json:"max_rss_kib"`
	CPUSeconds  float64 `json:"cpu_seconds"` // user+system time of the tool
	// OtherCPU is the share of the machine's CPU time during the run that
	// the tool did not use itself: other processes, and kernel threads
	// (including writeback and journalling done for the tool).
	OtherCPU float64 `json:"other_cpu"`
	// Quiet says the CPU settled before the run; SettleSeconds is the wait.
	Quiet         bool    `json:"quiet"`
	SettleSeconds float64 `json:"settle_seconds"`
	// PrepSeconds is the untimed preparation before the settling: wiping
	// the destination, dropping caches, warming the source (and for the
	// rerun workload, the first copy), and after the trash was emptied,
	// waiting for its freed inodes to stop being recent (trash.go).
	PrepSeconds float64 `json:"prep_seconds"`
	// Retries counts the disturbed attempts thrown away before this one.
	Retries int `json:"retries"`
	// Disk is what the run cost the emulated disk (-hdd-source).
	Disk *diskCounters `json:"disk,omitempty"`
}

// runOnce prepares the destination and the cache condition, then times the
// tool and a sync of the destination's filesystem (a durable copy).
func (b *bench) runOnce(w workload, cond string, t *tool, src string) (runResult, error) {
	prepStart := time.Now()
	r := &oneRun{w: w, cond: cond, t: t, src: src}
	r.dst, r.cache = b.runDirs(w, t)
	if err := b.prepareDest(r); err != nil {
		return runResult{}, err
	}
	if err := b.prepareCaches(r); err != nil {
		return runResult{}, err
	}
	b.waitFreed()
	prep := time.Since(prepStart)
	quiet, waited := b.settle()
	res, err := b.timeRun(r)
	if err != nil {
		return runResult{}, err
	}
	res.Quiet, res.SettleSeconds, res.PrepSeconds = quiet, waited.Seconds(), prep.Seconds()
	return res, nil
}

// oneRun is what one run of a tool copies, and where.
type oneRun struct {
	w          workload
	cond       string // warm or cold
	t          *tool
	src        string
	dst, cache string // see runDirs
}

// prepareDest wipes the destination, or for the rerun workload, makes it
// the tool's finished copy (once per tool: later runs copy onto it again).
func (b *bench) prepareDest(r *oneRun) error {
	switch {
	case !r.w.rerun:
		return b.wipe(false)
	case !b.rerunReady[r.t.name]:
		// The destination is a finished copy by the same tool; drop the
		// caches first so the untimed copy is not slowed by the ext4 trap.
		if err := b.trash(b.curFiles, b.curBytes, r.dst, r.cache); err != nil {
			return err
		}
		if err := b.dropCaches(); err != nil {
			return err
		}
		if _, _, err := r.t.run(b.ctx, r.src, r.dst, env(r.cache), b.rss, b.wrap); err != nil {
			return fmt.Errorf("preparing the rerun: %w", err)
		}
		if b.rerunReady == nil {
			b.rerunReady = map[string]bool{}
		}
		b.rerunReady[r.t.name] = true
	}
	return nil
}

// prepareCaches sets up the run's cache condition: cold, every cache
// dropped; warm, the source (and for the rerun workload, the
// destination's tree) read into the page cache.
func (b *bench) prepareCaches(r *oneRun) error {
	// Drop caches after the wipe: where a wipe deletes (a small tree, or no
	// trash), ext4 skips recently freed inodes whose table block is cached
	// (see trash.go). Warm, only the destination device's own cached blocks (where the
	// inode tables live) are dropped when that works, so the source stays
	// cached and need not be read back from the disk to warm it again.
	if r.cond == "cold" || !b.dropDeviceCache() {
		if r.cond == "warm" && !b.fullDropNoted {
			b.fullDropNoted = true
			b.note("the destination's block device cannot be opened to drop its cached blocks alone: warm runs drop every cache after the wipe and then read the source back in")
		}
		if err := b.dropCaches(); err != nil {
			return err
		}
	}
	if r.cond == "warm" && b.warmSrc != r.src {
		if err := preread(r.src); err != nil {
			return err
		}
		b.warmSrc = r.src
	}
	if r.cond == "warm" {
		if r.w.rerun {
			if _, _, err := treeStats(r.dst); err != nil {
				return err
			}
		}
	}
	return nil
}

// timeRun times the tool and the sync of the destination's filesystem
// after it, and measures the CPU time others used meanwhile (and with
// -hdd-source, what the run cost the emulated disk).
func (b *bench) timeRun(r *oneRun) (runResult, error) {
	var disk0 diskCounters
	if b.hdd != nil {
		var err error
		if disk0, err = b.hdd.settleCounters(b.ctx); err != nil {
			return runResult{}, err
		}
	}
	cpu0 := readCPU()
	start := time.Now()
	rss, cpu, err := r.t.run(b.ctx, r.src, r.dst, env(r.cache), b.rss, b.wrap)
	if err != nil {
		return runResult{}, err
	}
	toolDone := time.Now()
	if err := syncFS(b.dstRoot); err != nil {
		return runResult{}, err
	}
	end := time.Now()
	busy := readCPU().busy - cpu0.busy
	var disk *diskCounters
	if b.hdd != nil {
		disk1, err := b.hdd.settleCounters(b.ctx)
		if err != nil {
			return runResult{}, err
		}
		d := disk1.sub(disk0)
		disk = &d
	}
	wall := end.Sub(start)
	other := (busy.Seconds() - cpu.Seconds()) / (wall.Seconds() * float64(runtime.NumCPU()))
	return runResult{
		Seconds: wall.Seconds(), SyncSeconds: end.Sub(toolDone).Seconds(), MaxRSSKiB: rss,
		CPUSeconds: cpu.Seconds(), OtherCPU: max(other, 0), Disk: disk,
	}, nil
}

// cpuTimes are the machine's CPU time counters from /proc/stat.
type cpuTimes struct{ busy, total time.Duration }

// readCPU reads the aggregate line of /proc/stat (USER_HZ ticks, 100 per
// second on Linux); iowait counts as idle.
func readCPU() cpuTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	var t cpuTimes
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		d := time.Duration(n) * 10 * time.Millisecond
		if i >= 8 { // guest time is already counted in user time
			break
		}
		t.total += d
		if i != 3 && i != 4 { // idle, iowait
			t.busy += d
		}
	}
	return t
}

// settle waits, up to -settle, until the CPU has been quiet for half a
// second: on a shared machine a run that starts under someone else's build
// measures the build. It reports whether the CPU settled and how long it
// waited.
func (b *bench) settle() (bool, time.Duration) {
	start := time.Now()
	if b.cfg.settle <= 0 {
		return true, 0
	}
	for {
		c0 := readCPU()
		select {
		case <-time.After(500 * time.Millisecond):
		case <-b.ctx.Done():
			return false, time.Since(start)
		}
		c1 := readCPU()
		if d := c1.total - c0.total; d > 0 && float64(c1.busy-c0.busy)/float64(d) <= b.cfg.quietBusy {
			return true, time.Since(start)
		}
		if time.Since(start) >= b.cfg.settle {
			return false, time.Since(start)
		}
	}
}

// dropCaches writes back dirty data and, as root, empties the page, dentry
// and inode caches.
func (b *bench) dropCaches() error {
	unix.Sync()
	if !b.root {
		return nil
	}
	b.warmSrc = ""
	return os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0o200)
}

// dropDeviceCache flushes the destination's filesystem and drops the clean
// cached blocks of its block device (POSIX_FADV_DONTNEED on the device):
// the inode-table blocks that ext4's allocator checks for recently freed
// inodes, and no file's pages. It reports false when it cannot (not root,
// no block device found), and the caller drops every cache instead.
func (b *bench) dropDeviceCache() bool {
	if !b.root {
		return false
	}
	dev := blockDevice(b.dstRoot)
	if dev == "" {
		return false
	}
	if err := syncFS(b.dstRoot); err != nil {
		return false
	}
	fd, err := unix.Open(dev, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	return unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED) == nil
}

// blockDevice returns the /dev path of the block device holding dir, or "".
func blockDevice(dir string) string {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return ""
	}
	uevent, err := os.ReadFile(fmt.Sprintf("/sys/dev/block/%d:%d/uevent", unix.Major(st.Dev), unix.Minor(st.Dev)))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(uevent), "\n") {
		if name, ok := strings.CutPrefix(line, "DEVNAME="); ok {
			return "/dev/" + name
		}
	}
	return ""
}

// syncFS flushes the filesystem holding dir (syncfs).
func syncFS(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Syncfs(fd)
}

// checkCopy is a sanity check after a tool's first run: as many entries as
// the dataset, and as many bytes when sizes can be compared.
func checkCopy(dst string, files int, bytes int64, compareBytes bool) error {
	n, sz, err := treeStats(dst)
	if err != nil {
		return fmt.Errorf("checking the copy: %w", err)
	}
	if n != files || (compareBytes && sz != bytes) {
		return fmt.Errorf("the copy has %d entries and %d bytes, the source %d and %d", n, sz, files, bytes)
	}
	return nil
}
