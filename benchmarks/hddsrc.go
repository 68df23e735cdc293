//go:build linux

package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// The -hdd-source mode: the source is an ext4 image served through hddsim,
// a FUSE file whose reads take as long as a 7200 rpm USB hard disk's
// would (seek, rotation, transfer), under a read-only loop device and a
// read-only mount. Each run is cold (caches dropped), and hddsim's counters
// before and after it give the run's reads, seeks and modelled disk time:
// numbers that do not depend on how busy the CPU is, beside the wall time
// that does.

// hddLayoutVersion changes whenever the way the image is filled changes.
const hddLayoutVersion = 1

// hddSource is the mounted, modelled source.
type hddSource struct {
	script   string // hddsim.sh
	img, mnt string
	loop     string
	up       bool
	desc     string // for the report
}

// findHDDSim returns the hddsim.sh to use: the one named, else one on PATH,
// else the one beside the repository (../shared/tools/hddsim).
func findHDDSim(named, repo string) (string, error) {
	if named != "" {
		return filepath.Abs(named)
	}
	if p, err := exec.LookPath("hddsim.sh"); err == nil {
		return p, nil
	}
	p, err := filepath.Abs(filepath.Join(repo, "..", "shared", "tools", "hddsim", "hddsim.sh"))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(p); err != nil {
		return "", errors.New("hddsim.sh not found: name it with -hddsim PATH")
	}
	return p, nil
}

// hddStamp records what a built source image holds.
type hddStamp struct {
	Layout  int      `json:"layout"`
	Dataset int      `json:"dataset_version"`
	Scale   float64  `json:"scale"`
	Seed    uint64   `json:"seed"`
	Sets    []string `json:"sets"`
	Files   int      `json:"files"`
	Bytes   int64    `json:"bytes"`
	SizeMiB int64    `json:"size_mib"`
}

// setupHDDSource builds the source image (unless one with the same stamp is
// there) and brings it up through hddsim. A non-empty reason means the
// mode cannot run here and nothing was left behind.
func setupHDDSource(ctx context.Context, cfg *config, sets []*dataset, logf func(string, ...any)) (h *hddSource, reason string, err error) {
	if os.Geteuid() != 0 {
		return nil, "needs root (loop devices, mount, FUSE, dropping caches)", nil
	}
	script, err := findHDDSim(cfg.hddsim, cfg.repo)
	if err != nil {
		return nil, err.Error(), nil
	}
	for _, b := range []string{"losetup", "mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(b); err != nil {
			return nil, b + " is not installed", nil
		}
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return nil, "no /dev/fuse", nil
	}
	if _, err := output(ctx, "/", "/usr/bin/python3", "-c", "import fusepy"); err != nil {
		return nil, "python3-fusepy is not installed (Debian: apt-get install python3-fusepy)", nil
	}

	dir := filepath.Join(cfg.work, "hdd")
	h = &hddSource{script: script, img: filepath.Join(dir, "src.img"), mnt: filepath.Join(dir, "mnt")}
	want := hddStamp{Layout: hddLayoutVersion, Dataset: datasetVersion, Scale: cfg.scale, Seed: cfg.seed}
	var bytes, inodes int64
	for _, d := range sets {
		want.Sets = append(want.Sets, d.name)
		f, n := d.totals()
		want.Files += f
		want.Bytes += n
		dirs := map[string]bool{}
		for _, f := range d.files {
			bytes += (f.size + 4095) &^ 4095
			dirs[filepath.Dir(f.rel)] = true
		}
		inodes += int64(len(d.files) + len(dirs))
	}
	// Room to spare, so that the allocator is not squeezed into odd places.
	want.SizeMiB = (bytes+bytes/4+inodes*4096)/mib + 256
	stampPath := filepath.Join(dir, "src.stamp")
	var have hddStamp
	if b, err := os.ReadFile(stampPath); err == nil {
		_ = json.Unmarshal(b, &have)
	}
	if _, err := os.Stat(h.img); err != nil || !slices.Equal(have.Sets, want.Sets) || have.Layout != want.Layout ||
		have.Dataset != want.Dataset || have.Scale != want.Scale || have.Seed != want.Seed || have.Files != want.Files || have.Bytes != want.Bytes {
		if err := h.build(ctx, sets, want, logf); err != nil {
			return nil, "", fmt.Errorf("building the source image: %w", err)
		}
		b, _ := json.Marshal(want)
		if err := os.WriteFile(stampPath, b, 0o644); err != nil {
			return nil, "", err
		}
	}
	if h.loop, err = output(ctx, "/", h.script, "up", h.img, h.mnt, "--rotational"); err != nil {
		return nil, "", err
	}
	h.up = true
	h.desc = fmt.Sprintf("ext4 image of %d MiB (%s of files, written in shuffled order) served by hddsim (7200 rpm USB disk model) through read-only %s (queue/rotational 1)",
		want.SizeMiB, humanBytes(want.Bytes), h.loop)
	return h, "", nil
}

// build makes the image and fills it through a plain read-write loop mount.
//
// Each dataset's files are created (empty) in one shuffled order and their
// contents written in another, each file flushed before the next, so the
// three orders a copier could read in all differ: listing (by name), inode
// (creation) and disk (where the data went), as on a disk whose files were
// written and rewritten over time. The stamp files of the datasets go in
// too, so that dataset.ensure finds them and generates nothing.
func (h *hddSource) build(ctx context.Context, sets []*dataset, st hddStamp, logf func(string, ...any)) error {
	logf("building the hdd source image: %d MiB, %d files, %s", st.SizeMiB, st.Files, humanBytes(st.Bytes))
	start := time.Now()
	_ = os.Remove(h.img)
	_ = os.Remove(filepath.Join(filepath.Dir(h.img), "src.stamp"))
	if err := os.MkdirAll(filepath.Dir(h.img), 0o755); err != nil {
		return err
	}
	if _, err := output(ctx, "/", h.script, "mkimg", h.img, strconv.FormatInt(st.SizeMiB, 10), "ext4"); err != nil {
		return err
	}
	if _, err := output(ctx, "/", h.script, "rw", h.img, h.mnt); err != nil {
		return err
	}
	fillErr := func() error {
		root := filepath.Join(h.mnt, "data")
		for _, d := range sets {
			if err := fillShuffled(d, root, st.Scale, st.Seed); err != nil {
				return fmt.Errorf("%s: %w", d.name, err)
			}
		}
		return syncFS(h.mnt)
	}()
	_, downErr := output(ctx, "/", h.script, "down", h.mnt)
	if err := errors.Join(fillErr, downErr); err != nil {
		_ = os.Remove(h.img)
		return err
	}
	logf("built the image in %.1f s", time.Since(start).Seconds())
	return nil
}

// fillShuffled writes dataset d below root as dataset.ensure names it.
func fillShuffled(d *dataset, root string, scale float64, seed uint64) error {
	base := datasetBase(d.name, scale)
	dir := filepath.Join(root, base)
	dirs := map[string]bool{dir: true}
	for _, f := range d.files {
		dirs[filepath.Dir(filepath.Join(dir, f.rel))] = true
	}
	var sorted []string
	for p := range dirs {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	for _, p := range sorted {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
	}
	r := newRand(seed, "hdd-layout-"+d.name)
	for _, i := range r.Perm(len(d.files)) { // creation order: the inode numbers
		f := d.files[i]
		p := filepath.Join(dir, f.rel)
		if f.target != "" {
			if err := os.Symlink(f.target, p); err != nil {
				return err
			}
			continue
		}
		out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		if err := out.Close(); err != nil {
			return err
		}
	}
	buf := make([]byte, 1*mib)
	for _, i := range r.Perm(len(d.files)) { // write order: where the data lies
		f := d.files[i]
		if f.target != "" {
			continue
		}
		if err := fillFile(filepath.Join(dir, f.rel), f, buf); err != nil {
			return err
		}
	}
	for i, f := range d.files {
		if f.target != "" {
			continue
		}
		mt := baseTime.Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(filepath.Join(dir, f.rel), mt, mt); err != nil {
			return err
		}
	}
	files, bytes := d.totals()
	b, _ := json.Marshal(stamp{Version: datasetVersion, Scale: scale, Seed: seed, Files: files, Bytes: bytes})
	return os.WriteFile(filepath.Join(root, base+".stamp"), b, 0o644)
}

// fillFile writes f's content into the existing empty file p and flushes
// it, so that its blocks are allocated now, after those of the files
// written before it.
func fillFile(p string, f fileSpec, buf []byte) error {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], f.seed)
	src := rand.NewChaCha8(key)
	out, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	for left := f.size; left > 0; {
		n := int(min(left, int64(len(buf))))
		_, _ = src.Read(buf[:n])
		if _, err := out.Write(buf[:n]); err != nil {
			out.Close()
			return err
		}
		left -= int64(n)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// diskCounters are hddsim's counters, or the difference of two readings.
type diskCounters struct {
	Reads     int64   `json:"reads"`
	ReadBytes int64   `json:"read_bytes"`
	SeqReads  int64   `json:"seq_reads"`
	Seeks     int64   `json:"seeks"`
	ModelS    float64 `json:"model_s"` // modelled disk time: seek_s + xfer_s
	SeekS     float64 `json:"seek_s"`  // its positioning part
	XferS     float64 `json:"xfer_s"`  // its transfer part
	LateS     float64 `json:"late_s"`  // replies that left late (a busy CPU)
}

func (c diskCounters) sub(o diskCounters) diskCounters {
	return diskCounters{
		Reads: c.Reads - o.Reads, ReadBytes: c.ReadBytes - o.ReadBytes, SeqReads: c.SeqReads - o.SeqReads,
		Seeks: c.Seeks - o.Seeks, ModelS: c.ModelS - o.ModelS, SeekS: c.SeekS - o.SeekS,
		XferS: c.XferS - o.XferS, LateS: c.LateS - o.LateS,
	}
}

// counters reads the live counters. hddsim rewrites them within 0.1 s of a
// change, so the caller waits that long after the last read it wants
// counted.
func (h *hddSource) counters(ctx context.Context) (diskCounters, error) {
	out, err := output(ctx, "/", h.script, "stats", h.mnt)
	if err != nil {
		return diskCounters{}, err
	}
	var c diskCounters
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		return diskCounters{}, fmt.Errorf("hddsim counters: %w", err)
	}
	return c, nil
}

// settleCounters waits until the counters have stopped changing (the last
// reads of a run are in the file), at most two seconds, and returns them.
func (h *hddSource) settleCounters(ctx context.Context) (diskCounters, error) {
	prev, err := h.counters(ctx)
	if err != nil {
		return prev, err
	}
	for range 10 {
		time.Sleep(250 * time.Millisecond)
		c, err := h.counters(ctx)
		if err != nil || c == prev {
			return c, err
		}
		prev = c
	}
	return prev, nil
}

// close takes the source down (unmount, loop, server); the image stays for
// the next run.
func (h *hddSource) close() {
	if h == nil || !h.up {
		return
	}
	if _, err := output(context.Background(), "/", h.script, "down", h.mnt); err != nil {
		fmt.Fprintln(os.Stderr, "benchmarks: warning:", err)
	}
	h.up = false
}

// physEnt is one file for the physical-order reader.
type physEnt struct {
	path  string
	phys  int64
	known bool
	ino   uint64
	index int // listing order
}

// physRead is the reference reader of the -hdd-source mode: it lists every
// regular file below root (by name, as fastcopy does), asks each for the
// place of its first data (one FIEMAP), and reads the files in ascending
// place, each from start to end in 1 MiB reads, into nothing. Files whose
// place is unknown come last, by inode number. It marks how fast the
// source can be read at all: the floor a copier's reading order can reach.
func physRead(root string) error {
	ents, err := physOrder(root)
	if err != nil {
		return err
	}
	buf := make([]byte, 1*mib)
	for _, e := range ents {
		f, err := os.Open(e.path)
		if err != nil {
			return err
		}
		_, err = io.CopyBuffer(io.Discard, onlyReader{f}, buf)
		f.Close()
		if err != nil {
			return fmt.Errorf("reading %q: %w", e.path, err)
		}
	}
	return nil
}

// physOrder lists the regular files below root in the order physRead reads
// them.
func physOrder(root string) ([]physEnt, error) {
	var ents []physEnt
	var walk func(dir string) error
	walk = func(dir string) error {
		d, err := fileio.OpenDir(dir)
		if err != nil {
			return err
		}
		defer d.Close()
		list, err := d.ReadDir()
		if err != nil {
			return err
		}
		var subdirs []string
		for _, e := range list {
			st, err := d.Lstat(e.Name)
			if err != nil {
				return err
			}
			switch {
			case st.IsDir():
				subdirs = append(subdirs, e.Name)
			case st.IsRegular():
				off, ok := fileio.PhysicalStart(d, e.Name)
				ents = append(ents, physEnt{path: filepath.Join(dir, e.Name), phys: off, known: ok, ino: st.Ino, index: len(ents)})
			}
		}
		for _, s := range subdirs {
			if err := walk(filepath.Join(dir, s)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root); err != nil {
		return nil, err
	}
	slices.SortFunc(ents, func(a, b physEnt) int {
		switch {
		case a.known != b.known:
			if a.known {
				return -1
			}
			return 1
		case a.known && a.phys != b.phys:
			return cmpInt(a.phys, b.phys)
		case a.ino != b.ino:
			return cmpInt(a.ino, b.ino)
		}
		return cmpInt(a.index, b.index)
	})
	return ents, nil
}

// onlyReader hides the file's WriterTo, so that io.CopyBuffer reads with
// the buffer given.
type onlyReader struct{ io.Reader }

func cmpInt[T int | int64 | uint64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
