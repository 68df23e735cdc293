package mhl

import (
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// History is the ASC MHL history of a folder: its generations in sequence
// order, checked against the chain, and the histories nested below it.
type History struct {
	// Prefix is the history's folder relative to the folder Load was
	// given ('/'-separated; "" for that folder itself).
	Prefix      string
	Generations []Generation
	// Unchained are .mhl files in the ascmhl folder that the chain does
	// not list (a write that stopped between the generation and the
	// chain leaves one). They are not read.
	Unchained []string
	Children  []*History
}

// lastSeq is the highest sequence number used in the folder, chained or
// not.
func (h *History) lastSeq() int {
	n := 0
	for _, g := range h.Generations {
		n = max(n, g.Seq)
	}
	for _, u := range h.Unchained {
		if s, ok := fileSeq(u); ok {
			n = max(n, s)
		}
	}
	return n
}

// fileSeq reads the sequence number a generation file name starts with.
func fileSeq(name string) (int, bool) {
	i := 0
	for i < len(name) && name[i] >= '0' && name[i] <= '9' {
		i++
	}
	if i < 4 {
		return 0, false
	}
	n, err := strconv.Atoi(name[:i])
	return n, err == nil
}

// originals maps each path of h to the xxh128 (hex) it has first: the
// first one recorded with action original, else the first recorded.
func (h *History) originals() map[string]string { return h.originalsOf(formatXXH) }

// originalsOf is originals for the digests of one format.
func (h *History) originalsOf(format string) map[string]string {
	out := map[string]string{}
	orig := map[string]bool{}
	for _, g := range h.Generations {
		for _, f := range g.Files {
			for _, x := range f.Hashes {
				if x.Format != format {
					continue
				}
				v := x.Value
				if format != "c4" {
					v = strings.ToLower(v)
				}
				if _, ok := out[f.Path]; !ok {
					out[f.Path] = v
				}
				if x.Action == Original && !orig[f.Path] {
					orig[f.Path] = true
					out[f.Path] = v
				}
			}
		}
	}
	return out
}

// readAll reads the regular file name in d (not following a symlink).
func readAll(d *fileio.Dir, name string) ([]byte, error) { return fileio.ReadRegular(d, name) }

// loadHistoryDir reads the history in the ascmhl folder hd: the chain, and
// each generation it lists, whose C4 ID must match. Generation files no
// chain lists are named in Unchained.
func loadHistoryDir(hd *fileio.Dir, prefix string) (*History, error) {
	h := &History{Prefix: prefix}
	names, err := hd.ReadDir()
	if err != nil {
		return nil, err
	}
	var mhls []string
	hasChain := false
	for _, n := range names {
		switch {
		case n.Name == chainName:
			hasChain = true
		case strings.HasSuffix(n.Name, ".mhl") && !strings.HasPrefix(n.Name, "._") && !strings.HasPrefix(n.Name, "."):
			mhls = append(mhls, n.Name)
		}
	}
	sort.Strings(mhls)
	if !hasChain {
		// A first write that stopped between its two files leaves this;
		// Load refuses it, WriteGeneration numbers past it.
		h.Unchained = mhls
		return h, nil
	}
	chainPath := filepath.Join(hd.Path(), chainName)
	data, err := readAll(hd, chainName)
	if err != nil {
		return nil, err
	}
	entries, err := parseChain(data)
	if err != nil {
		return nil, &FormatError{Path: chainPath, Err: err}
	}
	chained := map[string]bool{}
	seqs := map[int]bool{}
	for _, e := range entries {
		p := filepath.Join(hd.Path(), e.FileName)
		if seqs[e.Seq] || chained[e.FileName] {
			return nil, &ChainError{Path: chainPath, Msg: fmt.Sprintf("lists generation %d (%q) twice", e.Seq, e.FileName)}
		}
		seqs[e.Seq], chained[e.FileName] = true, true
		data, err := readAll(hd, e.FileName)
		if fileio.IsNotExist(err) {
			return nil, &ChainError{Path: p, Msg: fmt.Sprintf("generation %d is in %s but missing", e.Seq, chainName)}
		}
		if err != nil {
			return nil, err
		}
		if got := C4Bytes(data); got != e.C4 {
			return nil, &ChainError{Path: p, Msg: fmt.Sprintf("changed since it was recorded: C4 %s, %s records %s", got, chainName, e.C4)}
		}
		g, err := ParseGeneration(data)
		if err != nil {
			return nil, &FormatError{Path: p, Err: err}
		}
		g.Seq, g.FileName, g.C4 = e.Seq, e.FileName, e.C4
		h.Generations = append(h.Generations, *g)
	}
	sort.Slice(h.Generations, func(i, j int) bool { return h.Generations[i].Seq < h.Generations[j].Seq })
	for _, m := range mhls {
		if !chained[m] {
			h.Unchained = append(h.Unchained, m)
		}
	}
	return h, nil
}

// HasHistory reports whether the folder root holds an ascmhl folder.
func HasHistory(root string) bool {
	st, err := fileio.StatPath(filepath.Join(root, historyDir))
	return err == nil && st.IsDir()
}

// Load reads the history of the folder root and every history nested
// below it, and checks each against its chain: every generation file a
// chain lists must be there with the C4 ID the chain records, and every
// generation of a nested history that a generation references must match
// that reference. A mismatch is a *ChainError (errors.Is ErrTampered).
// Without ROOT/ascmhl, Load returns ErrNoHistory.
func Load(root string) (*History, error) {
	rd, err := fileio.OpenDir(root)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	hd, err := rd.OpenSub(historyDir)
	if fileio.IsNotExist(err) {
		return nil, fmt.Errorf("%q: %w", root, ErrNoHistory)
	}
	if err != nil {
		return nil, err
	}
	h, err := loadHistoryDir(hd, "")
	hd.Close()
	if err != nil {
		return nil, err
	}
	all := map[string]*History{"": h}
	if err := findNested(rd, "", all); err != nil {
		return nil, err
	}
	// Attach each nested history to the nearest one above it.
	prefixes := make([]string, 0, len(all))
	for p := range all {
		prefixes = append(prefixes, p)
	}
	sort.Strings(prefixes)
	for _, p := range prefixes {
		if p == "" {
			continue
		}
		parent := ""
		for q := path.Dir(p); q != "."; q = path.Dir(q) {
			if all[q] != nil {
				parent = q
				break
			}
		}
		all[parent].Children = append(all[parent].Children, all[p])
	}
	for _, x := range all {
		if len(x.Generations) == 0 && len(x.Unchained) > 0 {
			return nil, &ChainError{Path: filepath.Join(rd.Path(), filepath.FromSlash(x.Prefix), historyDir), Msg: "generation files but no " + chainName + " listing them"}
		}
	}
	if err := checkReferences(rd, all); err != nil {
		return nil, err
	}
	return h, nil
}

// findNested walks the tree below d (at rel) for folders with a history of
// their own, without following symlinks.
func findNested(d *fileio.Dir, rel string, all map[string]*History) error {
	names, err := d.ReadDir()
	if err != nil {
		return err
	}
	for _, n := range names {
		if n.Name == historyDir {
			continue
		}
		typ := n.Type
		if typ == 0 {
			st, err := d.Lstat(n.Name)
			if err != nil {
				return err
			}
			typ = st.Type()
		}
		if typ != fileio.ModeDir {
			continue
		}
		sub, err := d.OpenSub(n.Name)
		if err != nil {
			return err
		}
		p := path.Join(rel, n.Name)
		err = func() error {
			if hd, err := sub.OpenSub(historyDir); err == nil {
				h, err := loadHistoryDir(hd, p)
				hd.Close()
				if err != nil {
					return err
				}
				all[p] = h
			}
			return findNested(sub, p, all)
		}()
		sub.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// checkReferences checks each hashlistreference of every generation: the
// generation of the nested history it names must have its C4 ID.
func checkReferences(rd *fileio.Dir, all map[string]*History) error {
	for _, h := range all {
		for _, g := range h.Generations {
			for _, r := range g.References {
				rel := path.Join(h.Prefix, r.Path)
				if strings.HasPrefix(r.Path, "/") || strings.HasPrefix(rel, "..") {
					return &ChainError{Path: r.Path, Msg: "a reference outside the folder"}
				}
				dir, name := path.Split(rel)
				full := filepath.Join(rd.Path(), filepath.FromSlash(rel))
				d, err := rd.OpenBeneath(strings.TrimSuffix(dir, "/"))
				var data []byte
				if err == nil {
					data, err = readAll(d, name)
					d.Close()
				}
				if fileio.IsNotExist(err) {
					return &ChainError{Path: full, Msg: fmt.Sprintf("referenced by %s but missing", g.FileName)}
				}
				if err != nil {
					return err
				}
				if got := C4Bytes(data); got != r.C4 {
					return &ChainError{Path: full, Msg: fmt.Sprintf("changed since %s referenced it: C4 %s, recorded %s", g.FileName, got, r.C4)}
				}
			}
		}
	}
	return nil
}

// ExpectedFile is a file a history vouches for.
type ExpectedFile struct {
	Path string // '/'-separated, relative to the folder Load was given
	Size int64  // -1 when not recorded
	// Sum is the file's xxh128: the one first recorded with action
	// original, else the first recorded. HasSum is false when the history
	// records the file only in other formats (Formats names them).
	Sum     verify.Sum
	HasSum  bool
	Formats []string
	// Digests holds the file's digest in each format recorded for it,
	// keyed by format name: in each, the first recorded with action
	// original, else the first recorded.
	Digests map[string]string
}

// Expected is what a folder must hold by its histories.
type Expected struct {
	Files  []ExpectedFile // sorted by path
	scopes []ignoreScope
}

type ignoreScope struct {
	prefix string
	ig     *Ignore
}

// Ignored reports whether rel ('/'-separated, relative to the folder Load
// was given) is left out by the ignore patterns of the latest generation
// of the history it lies in, or of a history above that one.
func (e *Expected) Ignored(rel string, isDir bool) bool {
	for _, s := range e.scopes {
		r := rel
		if s.prefix != "" {
			if !strings.HasPrefix(rel, s.prefix+"/") {
				continue
			}
			r = rel[len(s.prefix)+1:]
		}
		if s.ig.Ignored(r, isDir) {
			return true
		}
	}
	return false
}

// Patterns returns the ignore patterns of the latest generation of the
// history itself (the defaults when it has none).
func (h *History) Patterns() []string {
	if n := len(h.Generations); n > 0 {
		return h.Generations[n-1].Ignore
	}
	return DefaultIgnore
}

// Expected returns the files the history and its nested histories record,
// as the reference implementation's verify reads them: every path any
// generation lists (less those renamed away, a later entry naming them as
// previousPath, and those the latest ignore patterns leave out), each with
// its first xxh128 digest.
func (h *History) Expected() (*Expected, error) {
	e := &Expected{}
	var add func(h *History) error
	add = func(h *History) error {
		ig, err := NewIgnore(h.Patterns())
		if err != nil {
			return err
		}
		e.scopes = append(e.scopes, ignoreScope{prefix: h.Prefix, ig: ig})
		for _, c := range h.Children {
			if err := add(c); err != nil {
				return err
			}
		}
		return nil
	}
	if err := add(h); err != nil {
		return nil, err
	}
	files := map[string]*ExpectedFile{}
	var collect func(h *History) error
	collect = func(h *History) error {
		originals := h.originals()
		digests := h.originalDigests()
		for _, g := range h.Generations {
			for _, f := range g.Files {
				p, err := cleanRel(f.Path)
				if err != nil || p == "" {
					return fmt.Errorf("generation %q lists %q: %v", g.FileName, f.Path, err)
				}
				full := path.Join(h.Prefix, p)
				if f.PreviousPath != "" {
					if pp, err := cleanRel(f.PreviousPath); err == nil {
						delete(files, path.Join(h.Prefix, pp))
					}
				}
				x := files[full]
				if x == nil {
					x = &ExpectedFile{Path: full, Size: -1}
					files[full] = x
				}
				if f.Size >= 0 {
					x.Size = f.Size
				}
				for _, hs := range f.Hashes {
					if !contains(x.Formats, hs.Format) {
						x.Formats = append(x.Formats, hs.Format)
					}
				}
				if x.Digests == nil {
					x.Digests = digests[f.Path]
				}
				if o, ok := originals[p]; ok && !x.HasSum {
					s, err := verify.ParseHex(o)
					if err != nil {
						return fmt.Errorf("generation %q: %q: %v", g.FileName, f.Path, err)
					}
					x.Sum, x.HasSum = s, true
				}
			}
		}
		for _, c := range h.Children {
			if err := collect(c); err != nil {
				return err
			}
		}
		return nil
	}
	if err := collect(h); err != nil {
		return nil, err
	}
	for p, f := range files {
		if !e.Ignored(p, false) {
			e.Files = append(e.Files, *f)
		}
	}
	sort.Slice(e.Files, func(i, j int) bool { return e.Files[i].Path < e.Files[j].Path })
	return e, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
