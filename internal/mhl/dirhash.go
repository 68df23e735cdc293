package mhl

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fastcopy/fastcopy/verify"
)

// Directory hashes, as the specification defines them:
//
//   - content: the digest of the concatenated digests (raw bytes, not hex)
//     of the directory's children, sorted lexicographically: a file's
//     content digest, a subdirectory's content hash. Names play no part.
//   - structure: the same over, for each child, the digest of its name
//     (UTF-8) followed by the file's content digest or the subdirectory's
//     structure hash. Contents and names both play a part.
//
// An empty directory has the digest of no bytes as both.

// sumFunc is the digest of one format over a byte string.
type sumFunc func([]byte) []byte

// xxh128Bytes is the xxh128 digest of p in the byte order its hex form has.
func xxh128Bytes(p []byte) []byte {
	b := verify.Bytes(p).Bytes()
	return b[:]
}

// node is a file or directory of the tree a generation records.
type node struct {
	name     string
	path     string // '/'-separated, "" for the root
	dir      bool
	children map[string]*node
	file     *File // for files

	modTime time.Time // directories

	// Results for directories; the content digest for files.
	content, structure []byte
}

func newDirNode(name, path string) *node {
	return &node{name: name, path: path, dir: true, children: map[string]*node{}}
}

// buildTree arranges files and dirs into a tree below a root node. A path
// given twice, or given as a file and as a directory holding something, is
// an error.
func buildTree(files []File, dirs []Dir) (*node, error) {
	root := newDirNode("", "")
	dirAt := func(p string) (*node, error) {
		n := root
		if p == "" {
			return n, nil
		}
		for i, el := range strings.Split(p, "/") {
			c := n.children[el]
			if c == nil {
				c = newDirNode(el, strings.Join(strings.Split(p, "/")[:i+1], "/"))
				n.children[el] = c
			} else if !c.dir {
				return nil, fmt.Errorf("%q is listed as a file and holds other entries", c.path)
			}
			n = c
		}
		return n, nil
	}
	for _, d := range dirs {
		p, err := cleanRel(d.Path)
		if err != nil {
			return nil, err
		}
		n, err := dirAt(p)
		if err != nil {
			return nil, err
		}
		n.modTime = d.ModTime
	}
	for i := range files {
		p, err := cleanRel(files[i].Path)
		if err != nil {
			return nil, err
		}
		if p == "" {
			return nil, fmt.Errorf("a file has an empty path")
		}
		parent, name := "", p
		if j := strings.LastIndexByte(p, '/'); j >= 0 {
			parent, name = p[:j], p[j+1:]
		}
		d, err := dirAt(parent)
		if err != nil {
			return nil, err
		}
		if d.children[name] != nil {
			return nil, fmt.Errorf("%q is listed twice (or as a file and a directory)", p)
		}
		sum := files[i].Sum.Bytes()
		d.children[name] = &node{name: name, path: p, file: &files[i], content: sum[:]}
	}
	return root, nil
}

// cleanRel checks a '/'-separated relative path and returns it without a
// leading "./" or trailing "/".
func cleanRel(p string) (string, error) {
	p = strings.TrimPrefix(p, "./")
	p = strings.TrimSuffix(p, "/")
	if p == "." {
		return "", nil
	}
	if strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("path %q is not relative", p)
	}
	for _, el := range strings.Split(p, "/") {
		if p != "" && (el == "" || el == "." || el == "..") {
			return "", fmt.Errorf("path %q is not a clean relative path", p)
		}
	}
	return p, nil
}

// sortedChildren returns n's children in byte order of their names (the
// order of the reference implementation: code points, as UTF-8 sorts).
func (n *node) sortedChildren() []*node {
	out := make([]*node, 0, len(n.children))
	for _, c := range n.children {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// hashTree computes the content and structure hashes of every directory
// below and including n.
func hashTree(n *node, sum sumFunc) {
	var content, structure [][]byte
	for _, c := range n.sortedChildren() {
		child := c.content
		if c.dir {
			hashTree(c, sum)
			child = c.structure
		}
		content = append(content, c.content)
		structure = append(structure, sum(append([]byte(c.name), child...)))
	}
	n.content = hashOfList(content, sum)
	n.structure = hashOfList(structure, sum)
}

// hashOfList is the digest of the concatenation of list sorted
// lexicographically (the order of their hex forms).
func hashOfList(list [][]byte, sum sumFunc) []byte {
	sort.Slice(list, func(i, j int) bool { return bytes.Compare(list[i], list[j]) < 0 })
	return sum(bytes.Join(list, nil))
}
