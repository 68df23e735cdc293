package mhl

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The XML is written by hand, not by encoding/xml, so that its bytes are
// fixed (golden tests) and its layout is the reference implementation's:
// two spaces of indentation, one element a line.

const (
	nsHashList  = "urn:ASC:MHL:v2.0"
	nsDirectory = "urn:ASC:MHL:DIRECTORY:v2.0"
	xmlHeader   = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"
)

// xmlTime writes t as an xs:dateTime in UTC, to the second
// (2020-01-17T14:30:00+00:00, as the reference implementation writes it).
func xmlTime(t time.Time) string {
	return t.UTC().Truncate(time.Second).Format("2006-01-02T15:04:05-07:00")
}

type xmlWriter struct {
	b   bytes.Buffer
	err error
}

func (w *xmlWriter) line(depth int, s string) {
	w.b.WriteString(strings.Repeat("  ", depth))
	w.b.WriteString(s)
	w.b.WriteByte('\n')
}

// elem writes <name attrs>text</name> on one line; attrs are name, value
// pairs, skipped when the value is "".
func (w *xmlWriter) elem(depth int, name, text string, attrs ...string) {
	w.line(depth, w.open(name, attrs...)+w.escape(text, false)+"</"+name+">")
}

func (w *xmlWriter) open(name string, attrs ...string) string {
	var s strings.Builder
	s.WriteString("<" + name)
	for i := 0; i+1 < len(attrs); i += 2 {
		if attrs[i+1] == "" {
			continue
		}
		s.WriteString(" " + attrs[i] + `="` + w.escape(attrs[i+1], true) + `"`)
	}
	s.WriteString(">")
	return s.String()
}

// escape quotes s for XML text (or an attribute value) and records an error
// for what XML 1.0 cannot hold: bytes that are not UTF-8 and control
// characters but tab, newline and carriage return.
func (w *xmlWriter) escape(s string, attr bool) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			w.fail(fmt.Errorf("%q is not UTF-8, which XML cannot hold", s))
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"' && attr:
			b.WriteString("&quot;")
		case r == '\r' || (attr && (r == '\n' || r == '\t')):
			b.WriteString("&#x" + strconv.FormatInt(int64(r), 16) + ";")
		case r < 0x20 && r != '\n' && r != '\t', r == 0xFFFE, r == 0xFFFF:
			w.fail(fmt.Errorf("%q holds a control character, which XML cannot hold", s))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (w *xmlWriter) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// hashElems writes digests as elements named by their format.
func (w *xmlWriter) hashElems(depth int, hs []Hash) {
	for _, h := range hs {
		date := ""
		if !h.Date.IsZero() {
			date = xmlTime(h.Date)
		}
		w.elem(depth, h.Format, h.Value, "action", string(h.Action), "hashdate", date)
	}
}

func (w *xmlWriter) dirHashBody(depth int, d *DirHash) {
	w.line(depth, "<content>")
	w.hashElems(depth+1, d.Content)
	w.line(depth, "</content>")
	w.line(depth, "<structure>")
	w.hashElems(depth+1, d.Structure)
	w.line(depth, "</structure>")
}

// marshalGeneration writes g as an ASC MHL v2.0 hashlist document.
func marshalGeneration(g *Generation) ([]byte, error) {
	w := &xmlWriter{}
	w.b.WriteString(xmlHeader)
	w.line(0, `<hashlist version="2.0" xmlns="`+nsHashList+`">`)
	w.creatorInfo(&g.Creator)
	w.processInfo(g)
	w.hashes(g)
	w.references(g.References)
	w.line(0, "</hashlist>")
	return w.b.Bytes(), w.err
}

// creatorInfo writes the <creatorinfo> of a generation.
func (w *xmlWriter) creatorInfo(c *Creator) {
	w.line(1, "<creatorinfo>")
	w.elem(2, "creationdate", xmlTime(c.Date))
	w.elem(2, "hostname", c.Hostname)
	w.elem(2, "tool", c.Tool, "version", c.ToolVersion)
	for _, a := range c.Authors {
		w.elem(2, "author", a.Name, "role", a.Role, "email", a.Email, "phone", a.Phone)
	}
	if c.Location != "" {
		w.elem(2, "location", c.Location)
	}
	if c.Comment != "" {
		w.elem(2, "comment", c.Comment)
	}
	w.line(1, "</creatorinfo>")
}

// processInfo writes g's <processinfo>: the process, the root hash and the
// ignore patterns.
func (w *xmlWriter) processInfo(g *Generation) {
	w.line(1, "<processinfo>")
	w.elem(2, "process", string(g.Process))
	if g.Root != nil {
		w.line(2, "<roothash>")
		w.dirHashBody(3, g.Root)
		w.line(2, "</roothash>")
	}
	if len(g.Ignore) > 0 {
		w.line(2, "<ignore>")
		for _, p := range g.Ignore {
			w.elem(3, "pattern", p)
		}
		w.line(2, "</ignore>")
	}
	w.line(1, "</processinfo>")
}

// hashes writes g's <hashes>, its entries in generationOrder.
func (w *xmlWriter) hashes(g *Generation) {
	// The schema wants at least one entry in <hashes>, and <hashes> itself
	// is optional: a generation of an empty folder has none.
	if len(g.Files)+len(g.Dirs) == 0 {
		return
	}
	w.line(1, "<hashes>")
	for _, e := range generationOrder(g) {
		if e.file != nil {
			w.fileHash(e.file)
		} else {
			w.dirHash(e.dir)
		}
	}
	w.line(1, "</hashes>")
}

// fileHash writes the <hash> of a file.
func (w *xmlWriter) fileHash(f *FileHash) {
	size, mod := "", ""
	if f.Size >= 0 {
		size = strconv.FormatInt(f.Size, 10)
	}
	if !f.ModTime.IsZero() {
		mod = xmlTime(f.ModTime)
	}
	w.line(2, "<hash>")
	w.elem(3, "path", f.Path, "size", size, "lastmodificationdate", mod)
	w.hashElems(3, f.Hashes)
	if f.PreviousPath != "" {
		w.elem(3, "previousPath", f.PreviousPath)
	}
	w.line(2, "</hash>")
}

// dirHash writes the <directoryhash> of a directory.
func (w *xmlWriter) dirHash(d *DirHash) {
	mod := ""
	if !d.ModTime.IsZero() {
		mod = xmlTime(d.ModTime)
	}
	w.line(2, "<directoryhash>")
	w.elem(3, "path", d.Path, "lastmodificationdate", mod)
	w.dirHashBody(3, d)
	w.line(2, "</directoryhash>")
}

// references writes the <references> of a generation, when it has any.
func (w *xmlWriter) references(rs []Reference) {
	if len(rs) == 0 {
		return
	}
	w.line(1, "<references>")
	for _, r := range rs {
		w.line(2, "<hashlistreference>")
		w.elem(3, "path", r.Path)
		w.elem(3, "c4", r.C4)
		w.line(2, "</hashlistreference>")
	}
	w.line(1, "</references>")
}

// entry is a file or a directory hash, in the order a generation lists them.
type entry struct {
	file *FileHash
	dir  *DirHash
}

// generationOrder lists g's entries as the reference implementation does:
// directory by directory in post order (subdirectories first, in name
// order), each directory's files in name order followed by the directory's
// own hash.
func generationOrder(g *Generation) []entry {
	type bucket struct {
		files []*FileHash
		dir   *DirHash
		subs  map[string]bool
	}
	buckets := map[string]*bucket{}
	get := func(p string) *bucket {
		b := buckets[p]
		if b == nil {
			b = &bucket{subs: map[string]bool{}}
			buckets[p] = b
			for q := p; q != ""; {
				parent := ""
				if i := strings.LastIndexByte(q, '/'); i >= 0 {
					parent = q[:i]
				}
				pb := buckets[parent]
				if pb == nil {
					pb = &bucket{subs: map[string]bool{}}
					buckets[parent] = pb
				}
				if pb.subs[q] {
					break
				}
				pb.subs[q] = true
				q = parent
			}
		}
		return b
	}
	get("")
	for i := range g.Files {
		p := g.Files[i].Path
		parent := ""
		if j := strings.LastIndexByte(p, '/'); j >= 0 {
			parent = p[:j]
		}
		b := get(parent)
		b.files = append(b.files, &g.Files[i])
	}
	for i := range g.Dirs {
		get(g.Dirs[i].Path).dir = &g.Dirs[i]
	}
	var out []entry
	var walk func(p string)
	walk = func(p string) {
		b := buckets[p]
		subs := make([]string, 0, len(b.subs))
		for s := range b.subs {
			subs = append(subs, s)
		}
		sortStrings(subs)
		for _, s := range subs {
			walk(s)
		}
		sortFiles(b.files)
		for _, f := range b.files {
			out = append(out, entry{file: f})
		}
		if b.dir != nil && p != "" {
			out = append(out, entry{dir: b.dir})
		}
	}
	walk("")
	return out
}

// marshalChain writes the chain file listing gens.
func marshalChain(gens []Generation) ([]byte, error) {
	w := &xmlWriter{}
	w.b.WriteString(xmlHeader)
	w.line(0, `<ascmhldirectory xmlns="`+nsDirectory+`">`)
	for _, g := range gens {
		w.line(1, `<hashlist sequencenr="`+strconv.Itoa(g.Seq)+`">`)
		w.elem(2, "path", g.FileName)
		w.elem(2, "c4", g.C4)
		w.line(1, "</hashlist>")
	}
	w.line(0, "</ascmhldirectory>")
	return w.b.Bytes(), w.err
}

func hexOf(b []byte) string { return hex.EncodeToString(b) }
