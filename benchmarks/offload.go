//go:build linux

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The offload subcommand ("go run ./benchmarks offload") measures --also:
// a fast source of about 1 GiB of mixed files copied to one destination,
// and to two, each destination an ext4 filesystem on its own loop device
// whose writes are throttled (cgroup v1 blkio.throttle.write_bps_device,
// or io.max wbps with cgroup v2, set on the root group so that writeback
// pays it too), as two USB drives would be. Runs are interleaved by round,
// each cold (caches dropped), each to fresh destination names, and report
// the wall time, the device reads of the process (getrusage ru_inblock:
// the source and, verifying, the read-back) and what fastcopy's --json
// says it read and took from another destination's read.

type offloadConfig struct {
	work   string
	repo   string
	rounds int
	bps    int64
	scale  float64
	json   string
}

type offloadRun struct {
	Mode         string  `json:"mode"`
	Round        int     `json:"round"`
	Seconds      float64 `json:"seconds"`
	DeviceReads  int64   `json:"device_read_bytes"` // ru_inblock × 512
	BytesRead    int64   `json:"bytes_read"`        // sum over destinations of --json bytes_read
	BytesShared  int64   `json:"bytes_shared"`      // sum over destinations of --json bytes_shared
	ExitCode     int     `json:"exit_code"`
	SourceBytes  int64   `json:"source_bytes"`
	Destinations int     `json:"destinations"`
}

func runOffload(args []string) error {
	fs := flag.NewFlagSet("offload", flag.ContinueOnError)
	c := offloadConfig{}
	fs.StringVar(&c.work, "work", "/var/tmp/fastcopy-offload", "work directory (source, images, binary)")
	fs.StringVar(&c.repo, "repo", ".", "fastcopy repository to build from")
	fs.IntVar(&c.rounds, "rounds", 3, "interleaved rounds")
	fs.Int64Var(&c.bps, "bps", 100_000_000, "write limit of each destination device, bytes per second")
	fs.Float64Var(&c.scale, "scale", 1, "scale the source (1: about 1 GiB)")
	fs.StringVar(&c.json, "json", "", "write the runs as JSON here (default WORK/offload.json)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("offload needs root (loop devices, mount, cgroup throttles, dropping caches)")
	}
	ctl, reason := findIOCgroup()
	if reason != "" {
		return fmt.Errorf("offload: %s", reason)
	}
	ctx := context.Background()
	if err := os.MkdirAll(c.work, 0o755); err != nil {
		return err
	}
	bin := filepath.Join(c.work, "fastcopy")
	build := exec.Command("go", "build", "-o", bin, "./cmd/fastcopy")
	build.Dir, build.Stdout, build.Stderr = c.repo, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building fastcopy: %w", err)
	}
	src := filepath.Join(c.work, "src")
	srcBytes, err := offloadSource(src, c.scale)
	if err != nil {
		return err
	}
	var dests []*throttledDest
	defer func() {
		for _, d := range dests {
			d.close(ctl)
		}
	}()
	for i := range 2 {
		d, err := newThrottledDest(ctx, ctl, filepath.Join(c.work, fmt.Sprintf("d%d", i+1)), srcBytes, c.rounds, c.bps)
		dests = append(dests, d) // closed even when half made
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "offload: source %s in %s; destinations %s and %s, writes throttled to %s/s each (%s)\n",
		humanBytes(srcBytes), src, dests[0].loop, dests[1].loop, humanBytes(c.bps), ctl.describeWrite())
	runs, err := offloadRounds(c, bin, src, srcBytes, dests)
	if err != nil {
		return err
	}
	offloadReport(runs, srcBytes)
	path := c.json
	if path == "" {
		path = filepath.Join(c.work, "offload.json")
	}
	b, _ := json.MarshalIndent(runs, "", "  ")
	return os.WriteFile(path, b, 0o644)
}

// offloadRounds runs bin, c.rounds times, in each mode: to dests[0]
// alone and with --also to dests[1], verifying and not, caches dropped
// before each run, each to fresh destination names.
func offloadRounds(c offloadConfig, bin, src string, srcBytes int64, dests []*throttledDest) ([]offloadRun, error) {
	modes := []struct {
		name string
		two  bool
		args []string
	}{
		{"one", false, nil},
		{"two", true, nil},
		{"one-off", false, []string{"--verify=off"}},
		{"two-off", true, []string{"--verify=off"}},
	}
	var runs []offloadRun
	for r := 1; r <= c.rounds; r++ {
		for _, m := range modes {
			name := fmt.Sprintf("r%d-%s", r, m.name)
			argv := append([]string{bin, "--no-cache", "--json", "--no-progress"}, m.args...)
			argv = append(argv, src, filepath.Join(dests[0].mnt, name))
			n := 1
			if m.two {
				argv = append(argv, "--also", filepath.Join(dests[1].mnt, name))
				n = 2
			}
			unix.Sync()
			if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0o200); err != nil {
				return nil, err
			}
			run, err := timeOffload(argv)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			run.Mode, run.Round, run.SourceBytes, run.Destinations = m.name, r, srcBytes, n
			fmt.Fprintf(os.Stderr, "offload: %-8s round %d: %.2f s, device reads %s, read %s, taken from the other's read %s, exit %d\n",
				m.name, r, run.Seconds, humanBytes(run.DeviceReads), humanBytes(run.BytesRead), humanBytes(run.BytesShared), run.ExitCode)
			runs = append(runs, run)
		}
	}
	return runs, nil
}

// offloadSource writes the source once (kept between invocations): large
// clips and many small files, about 1 GiB at scale 1. Every large file has
// a size of its own: a large file whose size another shares is hashed
// before it is copied (to find duplicates), which would read it twice with
// one destination as with two, and is not what is measured here.
func offloadSource(dir string, scale float64) (int64, error) {
	r := rand.New(rand.NewPCG(1, 2))
	var sizes []int64
	for i := range int(24 * scale) {
		sizes = append(sizes, 24*mib+int64(i)*(mib+4096)+r.Int64N(4096))
	}
	for range int(2048 * scale) {
		sizes = append(sizes, 64<<10+r.Int64N(128<<10))
	}
	var total int64
	for _, n := range sizes {
		total += n
	}
	stamp := filepath.Join(dir, ".stamp")
	if b, err := os.ReadFile(stamp); err == nil && strings.TrimSpace(string(b)) == fmt.Sprint(total) {
		return total, nil
	}
	_ = os.RemoveAll(dir)
	buf := make([]byte, 64*mib)
	for i, n := range sizes {
		sub := filepath.Join(dir, fmt.Sprintf("d%02d", i/200))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return 0, err
		}
		for j := 0; j < int(n); j += 8 {
			v := r.Uint64()
			for b := 0; b < 8 && j+b < int(n); b++ {
				buf[j+b] = byte(v >> (8 * b))
			}
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%05d.bin", i)), buf[:n], 0o644); err != nil {
			return 0, err
		}
	}
	// Old enough that no run waits for its times to settle.
	old := time.Now().Add(-time.Hour)
	_ = filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			_ = os.Chtimes(p, old, old)
		}
		return nil
	})
	return total, os.WriteFile(stamp, []byte(fmt.Sprint(total)), 0o644)
}

// throttledDest is an ext4 filesystem on a loop device with a write limit.
type throttledDest struct {
	img, mnt, loop, dev string
}

func newThrottledDest(ctx context.Context, ctl ioCgroup, base string, srcBytes int64, rounds int, bps int64) (*throttledDest, error) {
	d := &throttledDest{img: base + ".img", mnt: base}
	// Room for every run's copy: fresh names each time, nothing removed.
	var err error
	if d.loop, d.dev, err = loopExt4(ctx, d.img, d.mnt, int64(4*rounds+1)*srcBytes*5/4+512*mib); err != nil {
		return d, err
	}
	return d, ctl.limitWrites(d.dev, bps)
}

func (d *throttledDest) close(ctl ioCgroup) {
	ctx := context.Background()
	if d.dev != "" {
		_ = ctl.limitWrites(d.dev, 0)
	}
	if d.loop != "" {
		_, _ = output(ctx, "/", "umount", d.mnt)
		_, _ = output(ctx, "/", "losetup", "-d", d.loop)
	}
	_ = os.Remove(d.img)
}

// limitWrites sets (bps > 0) or lifts the write limit of device dev on the
// hierarchy's root group, which the kernel's writeback threads are in.
func (c ioCgroup) limitWrites(dev string, bps int64) error {
	if c.v2 {
		v := fmt.Sprintf("%s wbps=%d", dev, bps)
		if bps == 0 {
			v = dev + " wbps=max"
		}
		return os.WriteFile(filepath.Join(c.root, "io.max"), []byte(v), 0o644)
	}
	return os.WriteFile(filepath.Join(c.root, "blkio.throttle.write_bps_device"), []byte(fmt.Sprintf("%s %d", dev, bps)), 0o644)
}

func (c ioCgroup) describeWrite() string {
	if c.v2 {
		return "cgroup v2 io.max wbps on the root group"
	}
	return "cgroup v1 blkio.throttle.write_bps_device on the root group"
}

// timeOffload runs argv and reads its --json report.
func timeOffload(argv []string) (offloadRun, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	start := time.Now()
	err := cmd.Run()
	run := offloadRun{Seconds: time.Since(start).Seconds()}
	if cmd.ProcessState == nil {
		return run, err
	}
	run.ExitCode = cmd.ProcessState.ExitCode()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		run.DeviceReads = ru.Inblock * 512
	}
	var rep struct {
		BytesRead    int64 `json:"bytes_read"`
		BytesShared  int64 `json:"bytes_shared"`
		Destinations []struct {
			BytesRead   int64 `json:"bytes_read"`
			BytesShared int64 `json:"bytes_shared"`
		} `json:"destinations"`
	}
	if jerr := json.Unmarshal([]byte(out.String()), &rep); jerr != nil {
		return run, fmt.Errorf("reading its --json: %v (exit %d)", jerr, run.ExitCode)
	}
	run.BytesRead, run.BytesShared = rep.BytesRead, rep.BytesShared
	for _, d := range rep.Destinations {
		run.BytesRead += d.BytesRead
		run.BytesShared += d.BytesShared
	}
	return run, nil
}

// offloadReport prints the medians and the ratios the floor is
// about: two destinations against one, and the source read once.
func offloadReport(runs []offloadRun, srcBytes int64) {
	med := map[string]offloadRun{}
	for _, mode := range []string{"one", "two", "one-off", "two-off"} {
		var sel []offloadRun
		for _, r := range runs {
			if r.Mode == mode {
				sel = append(sel, r)
			}
		}
		sort.Slice(sel, func(i, j int) bool { return sel[i].Seconds < sel[j].Seconds })
		if len(sel) > 0 {
			med[mode] = sel[len(sel)/2]
		}
	}
	fmt.Printf("| mode | destinations | median s | device reads | read (--json) | taken from the other's read |\n|---|---|---|---|---|---|\n")
	for _, mode := range []string{"one", "two", "one-off", "two-off"} {
		r := med[mode]
		fmt.Printf("| %s | %d | %.2f | %s | %s | %s |\n", mode, r.Destinations, r.Seconds, humanBytes(r.DeviceReads), humanBytes(r.BytesRead), humanBytes(r.BytesShared))
	}
	if o, t := med["one"], med["two"]; o.Seconds > 0 {
		fmt.Printf("\ntwo destinations / one, verified: %.3f\n", t.Seconds/o.Seconds)
	}
	if o, t := med["one-off"], med["two-off"]; o.Seconds > 0 {
		fmt.Printf("two destinations / one, --verify=off: %.3f\n", t.Seconds/o.Seconds)
		fmt.Printf("--verify=off, two destinations: source bytes read by the process %.3f of the source (read syscalls, --json), device reads %.3f\n",
			float64(t.BytesRead)/float64(srcBytes), float64(t.DeviceReads)/float64(srcBytes))
	}
}
