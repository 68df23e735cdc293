//go:build linux

package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// datasetVersion changes whenever a generator changes, so that a stale
// dataset on disk is rebuilt instead of reused.
const datasetVersion = 3

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
)

// fileSpec is one entry of a dataset: a regular file of size bytes whose
// content is the ChaCha8 stream keyed by seed (two files with the same seed
// and size are identical), or a symlink when target is set.
type fileSpec struct {
	rel    string
	size   int64
	seed   uint64
	target string
}

// dataset is a deterministic tree of files, generated once under data/.
type dataset struct {
	name  string
	files []fileSpec
}

func (d *dataset) totals() (files int, bytes int64) {
	for _, f := range d.files {
		files++
		bytes += f.size
	}
	return files, bytes
}

// workload is one row group of the report: a dataset and how it is copied.
type workload struct {
	name  string
	desc  string
	build func(scale float64, seed uint64) *dataset
	// rerun: the destination is filled by an untimed run of the same tool
	// first, and the timed run finds nothing to do.
	rerun bool
	// dups: the dataset repeats content, so the dedup pipelines run too.
	dups bool
	// extra: run only when named in -workloads (the shapes of the speed
	// floors of the copier's issues, beside the comparison every run makes).
	extra bool
}

var workloads = []workload{
	{name: "small", desc: "many small files (~12,000 files, ~9 KB average, nested tree)", build: smallFiles},
	{name: "tree4k", desc: "20,000 files × 4 KiB in 100 directories", build: tree4k, extra: true},
	{name: "srctree", desc: "source-code-like tree (~50,000 small files, ~5,000 directories, some symlinks)", build: srcTree},
	{name: "large", desc: "4 files × 256 MiB", build: largeFiles},
	{name: "1gib", desc: "one 1 GiB file", build: oneGiB, extra: true},
	{name: "bimodal", desc: "bimodal mix (~6,000 small files + 300 files of 2–6 MiB)", build: bimodal},
	{name: "dups", desc: "duplicate-heavy (~10,000 files, 40% repeat another file's content)", build: dupHeavy, dups: true},
	{name: "rerun", desc: "no-change rerun over the small-files tree", build: smallFiles, rerun: true},
}

func findWorkload(name string) (workload, bool) {
	for _, w := range workloads {
		if w.name == name {
			return w, true
		}
	}
	return workload{}, false
}

// scaled returns n scaled, at least 1.
func scaled(n int, scale float64) int {
	return max(1, int(math.Round(float64(n)*scale)))
}

// scaledSize returns size scaled and rounded to 4 KiB, at least 64 KiB.
func scaledSize(size int64, scale float64) int64 {
	s := int64(math.Round(float64(size)*scale/4096)) * 4096
	return max(s, 64*kib)
}

// newRand returns the generator of one dataset: the same seed and name give
// the same tree.
func newRand(seed uint64, name string) *rand.Rand {
	var h uint64 = 14695981039346656037
	for _, c := range []byte(name) {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return rand.New(rand.NewPCG(seed, h))
}

// logNormal draws a file size with the given mean; sigma sets the spread.
func logNormal(r *rand.Rand, mean, sigma float64, limit int64) int64 {
	mu := math.Log(mean) - sigma*sigma/2
	return min(int64(math.Exp(mu+sigma*r.NormFloat64())), limit)
}

func smallFiles(scale float64, seed uint64) *dataset {
	r := newRand(seed, "small")
	d := &dataset{name: "small"}
	n := scaled(12000, scale)
	for i := 0; i < n; i++ {
		// Depth 1 to 4: a few files near the top, most in the leaves.
		dir := fmt.Sprintf("d%02d", r.IntN(12))
		if r.IntN(10) > 0 {
			dir += fmt.Sprintf("/s%d", r.IntN(8))
			if r.IntN(4) > 0 {
				dir += fmt.Sprintf("/t%d", r.IntN(5))
			}
		}
		size := logNormal(r, 9000, 1.0, 1*mib)
		if r.IntN(100) == 0 {
			size = 0
		}
		d.files = append(d.files, fileSpec{rel: fmt.Sprintf("%s/file%05d.dat", dir, i), size: size, seed: r.Uint64()})
	}
	return d
}

func tree4k(scale float64, seed uint64) *dataset {
	r := newRand(seed, "tree4k")
	d := &dataset{name: "tree4k"}
	n := scaled(20000, scale)
	dirs := scaled(100, scale)
	for i := 0; i < n; i++ {
		d.files = append(d.files, fileSpec{rel: fmt.Sprintf("dir%03d/f%05d", i%dirs, i), size: 4096, seed: r.Uint64()})
	}
	return d
}

func srcTree(scale float64, seed uint64) *dataset {
	r := newRand(seed, "srctree")
	d := &dataset{name: "srctree"}
	n := scaled(50000, scale)
	ndirs := scaled(5000, scale)
	// Each new directory hangs below a recent one, which gives deep chains
	// and wide packages as real trees have.
	dirs := []string{"src"}
	for len(dirs) < ndirs {
		parent := dirs[len(dirs)-1-r.IntN(min(len(dirs), 40))]
		if strings.Count(parent, "/") > 8 {
			parent = dirs[r.IntN(len(dirs))]
		}
		dirs = append(dirs, fmt.Sprintf("%s/pkg%d", parent, len(dirs)))
	}
	exts := []string{".go", ".go", ".go", ".c", ".h", ".py", ".md", ".json", "_test.go", ".txt"}
	var last string
	for i := 0; i < n; i++ {
		dir := dirs[r.IntN(len(dirs))]
		rel := fmt.Sprintf("%s/f%05d%s", dir, i, exts[r.IntN(len(exts))])
		if last != "" && r.IntN(200) == 0 && filepath.Dir(last) == dir {
			d.files = append(d.files, fileSpec{rel: rel + ".lnk", target: filepath.Base(last)})
			continue
		}
		d.files = append(d.files, fileSpec{rel: rel, size: logNormal(r, 4000, 1.2, 512*kib), seed: r.Uint64()})
		last = rel
	}
	return d
}

func largeFiles(scale float64, seed uint64) *dataset {
	r := newRand(seed, "large")
	d := &dataset{name: "large"}
	for i := 0; i < 4; i++ {
		d.files = append(d.files, fileSpec{rel: fmt.Sprintf("big%d.bin", i), size: scaledSize(256*mib, scale), seed: r.Uint64()})
	}
	return d
}

func oneGiB(scale float64, seed uint64) *dataset {
	r := newRand(seed, "1gib")
	return &dataset{name: "1gib", files: []fileSpec{{rel: "disk.img", size: scaledSize(gib, scale), seed: r.Uint64()}}}
}

func bimodal(scale float64, seed uint64) *dataset {
	r := newRand(seed, "bimodal")
	d := &dataset{name: "bimodal"}
	small, big := scaled(6000, scale), scaled(300, scale)
	total := small + big
	step := total / big // the big files are spread through the tree
	for i := 0; i < total; i++ {
		dir := fmt.Sprintf("g%02d", r.IntN(30))
		if i%step == 0 && big > 0 {
			big--
			size := (2*mib + r.Int64N(4*mib)) &^ 4095
			d.files = append(d.files, fileSpec{rel: fmt.Sprintf("%s/media%05d.mov", dir, i), size: size, seed: r.Uint64()})
			continue
		}
		d.files = append(d.files, fileSpec{rel: fmt.Sprintf("%s/doc%05d.txt", dir, i), size: logNormal(r, 8000, 1.0, 1*mib), seed: r.Uint64()})
	}
	return d
}

func dupHeavy(scale float64, seed uint64) *dataset {
	r := newRand(seed, "dups")
	d := &dataset{name: "dups"}
	n := scaled(10000, scale)
	var originals []int
	for i := 0; i < n; i++ {
		rel := fmt.Sprintf("set%02d/item%05d.bin", r.IntN(50), i)
		if len(originals) > 0 && r.IntN(100) < 40 {
			o := d.files[originals[r.IntN(len(originals))]]
			d.files = append(d.files, fileSpec{rel: rel, size: o.size, seed: o.seed})
			continue
		}
		originals = append(originals, len(d.files))
		d.files = append(d.files, fileSpec{rel: rel, size: logNormal(r, 48*kib, 1.3, 16*mib), seed: r.Uint64()})
	}
	return d
}

// stamp records what a generated dataset on disk is.
type stamp struct {
	Version int     `json:"version"`
	Scale   float64 `json:"scale"`
	Seed    uint64  `json:"seed"`
	Files   int     `json:"files"`
	Bytes   int64   `json:"bytes"`
}

// ensure generates d under root/<name> unless a stamp says the same dataset
// is already there. It returns the dataset's directory.
func (d *dataset) ensure(root string, scale float64, seed uint64, logf func(string, ...any)) (string, error) {
	base := datasetBase(d.name, scale)
	dir := filepath.Join(root, base)
	stampPath := filepath.Join(root, base+".stamp")
	files, bytes := d.totals()
	want := stamp{Version: datasetVersion, Scale: scale, Seed: seed, Files: files, Bytes: bytes}
	if b, err := os.ReadFile(stampPath); err == nil {
		var have stamp
		if json.Unmarshal(b, &have) == nil && have == want {
			if _, err := os.Stat(dir); err == nil {
				return dir, nil
			}
		}
	}
	logf("generating dataset %s: %d files, %s", d.name, files, humanBytes(bytes))
	start := time.Now()
	_ = os.Remove(stampPath)
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := d.generate(dir); err != nil {
		return "", fmt.Errorf("generating %s: %w", d.name, err)
	}
	b, _ := json.Marshal(want)
	if err := os.WriteFile(stampPath, b, 0o644); err != nil {
		return "", err
	}
	logf("generated %s in %.1f s", d.name, time.Since(start).Seconds())
	return dir, nil
}

// datasetBase names a generated dataset's directory: the scale is part of
// the name, so that a -quick run does not replace the full-size datasets.
func datasetBase(name string, scale float64) string {
	return fmt.Sprintf("%s-x%g", name, scale)
}

// baseTime is the mtime of every generated file (plus its index in
// seconds), so that a dataset is the same on every machine.
var baseTime = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func (d *dataset) generate(dir string) error {
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
	idx := make(chan int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1*mib)
			for i := range idx {
				if err := writeSpec(dir, d.files[i], i, buf); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for i := range d.files {
		idx <- i
	}
	close(idx)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	return syncFS(dir)
}

func writeSpec(dir string, f fileSpec, i int, buf []byte) error {
	p := filepath.Join(dir, f.rel)
	if f.target != "" {
		return os.Symlink(f.target, p)
	}
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], f.seed)
	src := rand.NewChaCha8(key)
	out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
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
	if err := out.Close(); err != nil {
		return err
	}
	mt := baseTime.Add(time.Duration(i) * time.Second)
	return os.Chtimes(p, mt, mt)
}

// preread reads every file below dir once (the warm condition), with a few
// readers in parallel.
func preread(dir string) error {
	paths := make(chan string, 256)
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1*mib)
			for p := range paths {
				if err := readAll(p, buf); err != nil {
					mu.Lock()
					firstErr = errors.Join(firstErr, err)
					mu.Unlock()
				}
			}
		}()
	}
	err := filepath.WalkDir(dir, func(p string, de os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.Type().IsRegular() {
			paths <- p
		}
		return nil
	})
	close(paths)
	wg.Wait()
	return errors.Join(err, firstErr)
}

func readAll(p string, buf []byte) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		_, err := f.Read(buf)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// treeStats counts the entries below dir that are not directories, and
// the bytes of the regular files (Lstat of each, so it also warms the
// inode cache of a destination).
func treeStats(dir string) (entries int, bytes int64, err error) {
	err = filepath.WalkDir(dir, func(p string, de os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.IsDir() {
			return nil
		}
		fi, err := de.Info()
		if err != nil {
			return err
		}
		entries++
		if fi.Mode().IsRegular() {
			bytes += fi.Size()
		}
		return nil
	})
	return entries, bytes, err
}
