package mhl

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

const (
	historyDir = "ascmhl"           // the history's folder below its root
	chainName  = "ascmhl_chain.xml" // the chain file in it
	formatXXH  = "xxh128"
)

func sortStrings(s []string) { sort.Strings(s) }

func sortFiles(fs []*FileHash) {
	sort.Slice(fs, func(i, j int) bool { return fs[i].Path < fs[j].Path })
}

// GenerationFileName is the name of generation seq of the history of a
// folder named folder, created at t: NNNN_<folder>_<YYYY-MM-DD>_<HHMMSS>Z.mhl
// (UTC).
func GenerationFileName(seq int, folder string, t time.Time) string {
	return fmt.Sprintf("%04d_%s_%s.mhl", seq, folder, t.UTC().Format("2006-01-02_150405Z"))
}

// WriteGeneration records the files of ng as the next generation of the
// history of the folder root: it writes ROOT/ascmhl/NNNN_<name>_<date>Z.mhl
// and adds its C4 ID to ROOT/ascmhl/ascmhl_chain.xml (creating the folder
// and the chain for the first generation). The existing history is checked
// against its chain first (ErrTampered when it does not match); its files
// are left as they are.
//
// Nothing is hashed: the files' xxh128 digests are ng's; the directory
// content and structure hashes are computed from them. A directory's
// modification time is read from the tree unless ng.Dirs gives it. Files
// and directories the ignore patterns match are left out.
//
// Each file is written under a temporary name, flushed, renamed into place
// and the folder flushed: the generation file is complete before the chain
// names it, and the chain is replaced whole. One writer at a time: the
// caller holds whatever lock guards root.
func WriteGeneration(root string, ng *NewGeneration) (Written, error) {
	rd, err := fileio.OpenDirFaults(root, ng.faults)
	if err != nil {
		return Written{}, err
	}
	defer rd.Close()
	return WriteGenerationIn(rd, root, ng)
}

// WriteGenerationIn is WriteGeneration into the folder rd, open already
// (the directory a copy filled and holds locked, whatever its path leads
// to now); root is its path, for the generation's name and the paths
// returned.
func WriteGenerationIn(rd *fileio.Dir, root string, ng *NewGeneration) (Written, error) {
	hd, err := rd.OpenSub(historyDir)
	created := false
	if fileio.IsNotExist(err) {
		if err = rd.Mkdir(historyDir, 0o777); err != nil && !fileio.IsExist(err) {
			return Written{}, err
		}
		created = true
		hd, err = rd.OpenSub(historyDir)
	}
	if err != nil {
		return Written{}, err
	}
	defer hd.Close()
	if created {
		if err := rd.AsFile().Sync(); err != nil {
			return Written{}, err
		}
	}
	h, err := loadHistoryDir(hd, "")
	if err != nil {
		return Written{}, err
	}
	g, err := h.next(rd, root, ng)
	if err != nil {
		return Written{}, err
	}
	data, err := marshalGeneration(g)
	if err != nil {
		return Written{}, err
	}
	g.C4 = C4Bytes(data)
	if _, err := hd.Lstat(g.FileName); err == nil {
		return Written{}, fmt.Errorf("%q exists already: %w", filepath.Join(root, historyDir, g.FileName), os.ErrExist)
	}
	if err := writeAtomic(hd, g.FileName, data); err != nil {
		return Written{}, err
	}
	gens := append(append([]Generation{}, h.Generations...), *g)
	chain, err := marshalChain(gens)
	if err != nil {
		return Written{}, err
	}
	if err := writeAtomic(hd, chainName, chain); err != nil {
		return Written{}, err
	}
	return Written{Seq: g.Seq, Path: filepath.Join(root, historyDir, g.FileName), C4: g.C4}, nil
}

// writeAtomic writes data to name in d, whole or not at all, flushed
// (fileio.WriteFileAtomic).
func writeAtomic(d *fileio.Dir, name string, data []byte) error {
	return fileio.WriteFileAtomic(d, name, data, true)
}

// next builds the generation that follows h from ng.
func (h *History) next(rd *fileio.Dir, root string, ng *NewGeneration) (*Generation, error) {
	c := withCreatorDefaults(ng.Creator)
	process := ng.Process
	if process == "" {
		process = InPlace
	}
	patterns := mergePatterns(h.Patterns(), ng.Ignore)
	ig, err := NewIgnore(patterns)
	if err != nil {
		return nil, err
	}
	files, err := keptFiles(ng.Files, ig)
	if err != nil {
		return nil, err
	}
	dirs, err := keptDirs(ng.Dirs, ig)
	if err != nil {
		return nil, err
	}
	tree, err := buildTree(files, dirs)
	if err != nil {
		return nil, err
	}
	formats := ng.formats()
	dirHashes, err := hashTreeIn(tree, formats)
	if err != nil {
		return nil, err
	}
	seq := h.lastSeq() + 1
	folder := filepath.Base(fileio.RealPath(root))
	g := &Generation{
		Seq:      seq,
		FileName: GenerationFileName(seq, folder, c.Date),
		Creator:  c,
		Process:  process,
		Ignore:   patterns,
	}
	gw := genWalker{g: g, rd: rd, formats: formats, originals: map[string]map[string]string{}, dirHashes: dirHashes, date: c.Date}
	for _, f := range formats {
		gw.originals[f] = h.originalsOf(f)
	}
	gw.walk(tree)
	root0 := gw.dirHash(tree)
	g.Root = &root0
	return g, nil
}

// withCreatorDefaults is c with its date set (now when zero), truncated to
// the second in UTC, and the tool and host name filled in when empty.
func withCreatorDefaults(c Creator) Creator {
	if c.Date.IsZero() {
		c.Date = time.Now()
	}
	c.Date = c.Date.UTC().Truncate(time.Second)
	if c.Tool == "" {
		c.Tool = Tool
	}
	if c.Hostname == "" {
		c.Hostname, _ = os.Hostname()
	}
	return c
}

// keptFiles is fs with their paths cleaned, less the root and the files ig
// matches.
func keptFiles(fs []File, ig *Ignore) ([]File, error) {
	var files []File
	for _, f := range fs {
		p, err := cleanRel(f.Path)
		if err != nil {
			return nil, err
		}
		if p != "" && !ig.Ignored(p, false) {
			f.Path = p
			files = append(files, f)
		}
	}
	return files, nil
}

// keptDirs is ds with their paths cleaned, less the root and the
// directories ig matches.
func keptDirs(ds []Dir, ig *Ignore) ([]Dir, error) {
	var dirs []Dir
	for _, d := range ds {
		p, err := cleanRel(d.Path)
		if err != nil {
			return nil, err
		}
		if p != "" && !ig.Ignored(p, true) {
			d.Path = p
			dirs = append(dirs, d)
		}
	}
	return dirs, nil
}

// genWalker fills a generation's file and directory hashes from a hashed
// tree.
type genWalker struct {
	g         *Generation
	rd        *fileio.Dir                  // the root, for directory times ng did not give
	formats   []string                     // the formats each entry is recorded in
	originals map[string]map[string]string // format -> path -> first digest in the history
	dirHashes map[*node]*dirPairs          // each directory's hashes, in formats' order
	date      time.Time                    // the generation's creation date
}

// walk appends the files and directories below n to the generation, each
// directory after its contents.
func (w *genWalker) walk(n *node) {
	for _, ch := range n.sortedChildren() {
		if ch.dir {
			if ch.modTime.IsZero() {
				ch.modTime = dirModTime(w.rd, ch.path)
			}
			w.walk(ch)
			w.g.Dirs = append(w.g.Dirs, w.dirHash(ch))
			continue
		}
		w.g.Files = append(w.g.Files, w.fileHash(ch.file))
	}
}

// dirHash is the hashes of the directory n, dated with the generation.
func (w *genWalker) dirHash(n *node) DirHash {
	d := DirHash{Path: n.path, ModTime: n.modTime}
	if p := w.dirHashes[n]; p != nil {
		for i, f := range p.formats {
			d.Content = append(d.Content, Hash{Format: f, Value: p.content[i], Date: w.date})
			d.Structure = append(d.Structure, Hash{Format: f, Value: p.structure[i], Date: w.date})
		}
	}
	return d
}

// fileHash is f's xxh128 entry: its action decided from the history when f
// gives none, dated with the generation when f has no hash date.
func (w *genWalker) fileHash(f *File) FileHash {
	date := f.HashDate
	if date.IsZero() {
		date = w.date
	}
	fh := FileHash{Path: f.Path, Size: f.Size, ModTime: f.ModTime}
	for _, format := range w.formats {
		sum := fileDigest(f, format) // present: hashTreeIn checked
		action := f.Action
		if action == "" {
			switch orig, ok := w.originals[format][f.Path]; {
			case !ok:
				action = Original
			case sameDigest(format, orig, sum):
				action = Verified
			default:
				action = Failed
			}
		}
		fh.Hashes = append(fh.Hashes, Hash{Format: format, Value: sum, Action: action, Date: date})
	}
	return fh
}

// dirModTime is the modification time of the directory rel below rd, or
// the zero time when it cannot be read (the attribute is then left out).
func dirModTime(rd *fileio.Dir, rel string) time.Time {
	d, err := rd.OpenBeneath(rel)
	if err != nil {
		return time.Time{}
	}
	defer d.Close()
	st, err := d.Stat()
	if err != nil {
		return time.Time{}
	}
	return time.Unix(0, st.Mtime)
}

func mergePatterns(old, add []string) []string {
	out := append([]string{}, old...)
	seen := map[string]bool{}
	for _, p := range out {
		seen[p] = true
	}
	for _, p := range add {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
