//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// tool is one way of copying a tree: one or more commands run in sequence.
type tool struct {
	name  string // for -tools
	label string // for tables and charts
	// cmds returns the command lines that copy src to dst (dst does not
	// exist yet, or holds a previous copy for the rerun workload).
	cmds func(t *tool, src, dst string) [][]string
	bins []string // executables needed; the first is resolved into path
	path []string // resolved executables, same order as bins
	// dupsOnly: run only on workloads with duplicate content.
	dupsOnly bool
	// extra: run only when named in -tools (a mode for a closer look,
	// not one of the comparisons every run makes).
	extra bool
	// noCopy: the tool only reads the source (the physical-order reader),
	// so there is no copy to check.
	noCopy bool
	// payload: the copy is in this folder of the destination (a bag's
	// data/), beside the tool's own records.
	payload string
}

func fastcopyCmds(flags ...string) func(t *tool, src, dst string) [][]string {
	return func(t *tool, src, dst string) [][]string {
		cmd := append([]string{t.path[0], "-q"}, flags...)
		return [][]string{append(cmd, src, dst)}
	}
}

// allTools lists every tool in report order; the first fastcopy entry is
// the default mode.
func allTools() []*tool {
	return []*tool{
		{name: "fastcopy", label: "fastcopy (--verify=device, default)", bins: []string{"fastcopy"}, cmds: fastcopyCmds("--verify=device")},
		{name: "fastcopy-cache", label: "fastcopy --verify=cache", bins: []string{"fastcopy"}, extra: true, cmds: fastcopyCmds("--verify=cache")},
		{name: "fastcopy-noverify", label: "fastcopy --verify=off", bins: []string{"fastcopy"}, extra: true, cmds: fastcopyCmds("--verify=off")},
		{name: "fastcopy-nosync-cache", label: "fastcopy --no-sync --verify=cache", bins: []string{"fastcopy"}, extra: true, cmds: fastcopyCmds("--no-sync", "--verify=cache")},
		{name: "fastcopy-nosync-off", label: "fastcopy --no-sync --verify=off", bins: []string{"fastcopy"}, extra: true, cmds: fastcopyCmds("--no-sync", "--verify=off")},
		{name: "fastcopy-sha256", label: "fastcopy --manifest-hash sha256", bins: []string{"fastcopy"}, extra: true, cmds: func(t *tool, src, dst string) [][]string {
			return [][]string{{t.path[0], "-q", "--manifest-hash", "sha256", "--manifest", dst + ".sha256", src, dst}}
		}},
		{name: "fastcopy-bag", label: "fastcopy --bag (sha256)", bins: []string{"fastcopy"}, extra: true, payload: "data", cmds: fastcopyCmds("--bag")},
		{name: "fastcopy-off", label: "fastcopy --verify=off --dedup=off --no-cache", bins: []string{"fastcopy"}, cmds: fastcopyCmds("--verify=off", "--dedup=off", "--no-cache")},
		{name: "cp", label: "cp -a", bins: []string{"cp"}, cmds: func(t *tool, src, dst string) [][]string {
			return [][]string{{t.path[0], "-a", src + "/.", dst}}
		}},
		{name: "rsync", label: "rsync -a", bins: []string{"rsync"}, cmds: func(t *tool, src, dst string) [][]string {
			return [][]string{{t.path[0], "-a", src + "/", dst + "/"}}
		}},
		{name: "rclone", label: "rclone copy --links", bins: []string{"rclone"}, cmds: func(t *tool, src, dst string) [][]string {
			// An empty config: rclone neither asks for one nor reads the user's.
			return [][]string{{t.path[0], "copy", "--links", "--config", "/dev/null", src, dst}}
		}},
		{name: "physread", label: "physical-order reader (floor)", bins: []string{"self"}, extra: true, noCopy: true, cmds: func(t *tool, src, dst string) [][]string {
			return [][]string{{t.path[0], "-physread", src}}
		}},
		{name: "cp+jdupes", label: "cp -a + jdupes -L -r", bins: []string{"cp", "jdupes"}, dupsOnly: true, cmds: func(t *tool, src, dst string) [][]string {
			return [][]string{{t.path[0], "-a", src + "/.", dst}, {t.path[1], "-q", "-L", "-r", dst}}
		}},
	}
}

// commandLine is the tool's command line with placeholders, for the report.
func (t *tool) commandLine() string {
	if t.path == nil { // not resolved: show the bare names
		t.path = t.bins
		defer func() { t.path = nil }()
	}
	var parts []string
	for _, c := range t.cmds(t, "SRC", "DST") {
		args := append([]string{filepath.Base(c[0])}, c[1:]...)
		parts = append(parts, strings.Join(args, " "))
	}
	return strings.Join(parts, " && ")
}

// resolve finds the tool's executables; fastcopyBin stands for "fastcopy".
// It returns why the tool cannot run, or "".
func (t *tool) resolve(fastcopyBin string) string {
	t.path = nil
	for _, b := range t.bins {
		if b == "fastcopy" {
			t.path = append(t.path, fastcopyBin)
			continue
		}
		if b == "self" { // the harness's own physical-order reader
			p, err := os.Executable()
			if err != nil {
				return "cannot find the harness's own executable: " + err.Error()
			}
			t.path = append(t.path, p)
			continue
		}
		p, err := exec.LookPath(b)
		if err != nil {
			return b + " is not installed"
		}
		t.path = append(t.path, p)
	}
	return ""
}

// wrap, when set, prefixes every command (the slow-source mode runs tools
// inside a throttled cgroup).
type wrapFunc func(argv []string) []string

// rssProbe measures the peak RSS of the commands it runs.
//
// The rusage Maxrss of a child of this harness is not the tool's own: os/exec
// starts children with vfork (CLONE_VM), and at exec the kernel folds the
// peak RSS of the address space being left (the harness's, tens of MiB) into
// the child's ru_maxrss. GNU time forks the tool from a process of about
// 1 MiB and reports the tool's ru_maxrss (%M, KiB), so when it is installed
// the harness runs each command under it; otherwise it reads
// ProcessState.SysUsage and drops values that cannot be told apart from
// its own peak.
type rssProbe struct {
	time string // GNU time, or ""
	out  string // file GNU time writes %M to
}

func newRSSProbe(ctx context.Context, work string) *rssProbe {
	p := &rssProbe{out: filepath.Join(work, "maxrss.txt")}
	if bin, err := exec.LookPath("time"); err == nil {
		if v, _ := exec.CommandContext(ctx, bin, "--version").CombinedOutput(); strings.Contains(string(v), "GNU") {
			p.time = bin
		}
	}
	return p
}

func (p *rssProbe) wrap(argv []string) []string {
	if p.time == "" {
		return argv
	}
	_ = os.Remove(p.out)
	return append([]string{p.time, "-f", "%M", "-o", p.out}, argv...)
}

// read returns the peak RSS in KiB of the command that just ran, or 0 when
// it is unknown.
func (p *rssProbe) read(ps *os.ProcessState) int64 {
	if p.time != "" {
		b, err := os.ReadFile(p.out)
		if err != nil {
			return 0
		}
		// "Command exited with non-zero status N" may come first.
		lines := strings.Fields(strings.TrimSpace(string(b)))
		if len(lines) == 0 {
			return 0
		}
		kb, _ := strconv.ParseInt(lines[len(lines)-1], 10, 64)
		return kb
	}
	if ps == nil {
		return 0
	}
	child, ok := ps.SysUsage().(*syscall.Rusage)
	var self syscall.Rusage
	if !ok || syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || child.Maxrss <= self.Maxrss {
		return 0
	}
	return child.Maxrss // KiB on Linux
}

// run executes the tool's commands in order and returns the largest peak
// RSS among them, in KiB (0 when unknown), and the CPU time they used.
//
// env is the environment of the commands (nil: the harness's own).
func (t *tool) run(ctx context.Context, src, dst string, env []string, rss *rssProbe, wrap wrapFunc) (maxRSS int64, cpu time.Duration, err error) {
	for _, argv := range t.cmds(t, src, dst) {
		argv = rss.wrap(argv)
		if wrap != nil {
			argv = wrap(argv)
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		runErr := cmd.Run()
		maxRSS = max(maxRSS, rss.read(cmd.ProcessState))
		if ps := cmd.ProcessState; ps != nil {
			// A child's rusage includes its waited-for children (GNU time's tool).
			cpu += ps.UserTime() + ps.SystemTime()
		}
		if runErr != nil {
			msg := strings.TrimSpace(out.String())
			if len(msg) > 600 {
				msg = "..." + msg[len(msg)-600:]
			}
			return maxRSS, cpu, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), runErr, msg)
		}
	}
	return maxRSS, cpu, nil
}

// buildFastcopy builds the copier into dir/fastcopy, from the working tree
// of repo, or from a git revision of it when rev is set (exported with git
// archive, so neither the working tree nor the index is touched).
func buildFastcopy(ctx context.Context, repo, rev, dir string) (bin, version string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	bin, err = filepath.Abs(filepath.Join(dir, "fastcopy"))
	if err != nil {
		return "", "", err
	}
	srcDir := repo
	if rev != "" {
		commit, err := output(ctx, repo, "git", "rev-parse", "--verify", rev+"^{commit}")
		if err != nil {
			return "", "", err
		}
		srcDir = filepath.Join(dir, "src-"+commit[:12])
		if _, err := os.Stat(filepath.Join(srcDir, "go.mod")); err != nil {
			tarball := srcDir + ".tar"
			if _, err := output(ctx, repo, "git", "archive", "--format=tar", "-o", tarball, commit); err != nil {
				return "", "", err
			}
			if err := os.MkdirAll(srcDir, 0o755); err != nil {
				return "", "", err
			}
			if _, err := output(ctx, srcDir, "tar", "-xf", tarball); err != nil {
				return "", "", err
			}
			os.Remove(tarball)
		}
		version = commit[:12]
	} else {
		version = describeTree(ctx, repo)
	}
	if _, err := output(ctx, srcDir, "go", "build", "-o", bin, "./cmd/fastcopy"); err != nil {
		return "", "", fmt.Errorf("building fastcopy (use -rev HEAD to build the last commit, or -fastcopy to name a binary): %w", err)
	}
	return bin, version, nil
}

// describeTree names the working tree's commit, marked when it has
// uncommitted changes. --no-optional-locks keeps git status from
// refreshing the index.
func describeTree(ctx context.Context, repo string) string {
	commit, err := output(ctx, repo, "git", "rev-parse", "--short=12", "HEAD")
	if err != nil {
		return "unknown"
	}
	if st, err := output(ctx, repo, "git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=no"); err == nil && st != "" {
		commit += " with uncommitted changes"
	}
	return commit
}

// output runs a command in dir and returns its trimmed stdout.
func output(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// toolVersion is the first line of a tool's version output.
func toolVersion(ctx context.Context, bin string) string {
	flag := "--version"
	if filepath.Base(bin) == "rclone" {
		flag = "version"
	}
	out, err := exec.CommandContext(ctx, bin, flag).CombinedOutput()
	if err != nil && len(out) == 0 {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}
