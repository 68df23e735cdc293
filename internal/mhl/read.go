package mhl

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The parse structures match elements by their local names, as the
// reference implementation does: the namespace is checked on the root
// element only.

type xHashValue struct {
	XMLName  xml.Name
	Value    string `xml:",chardata"`
	Action   string `xml:"action,attr"`
	HashDate string `xml:"hashdate,attr"`
}

type xPath struct {
	Value   string `xml:",chardata"`
	Size    string `xml:"size,attr"`
	ModDate string `xml:"lastmodificationdate,attr"`
}

type xDirContainer struct {
	Hashes []xHashValue `xml:",any"`
}

type xEntry struct {
	XMLName      xml.Name
	Path         xPath          `xml:"path"`
	Content      *xDirContainer `xml:"content"`
	Structure    *xDirContainer `xml:"structure"`
	PreviousPath string         `xml:"previousPath"`
	Metadata     *struct{}      `xml:"metadata"`
	Hashes       []xHashValue   `xml:",any"`
}

type xAuthor struct {
	Name  string `xml:",chardata"`
	Email string `xml:"email,attr"`
	Phone string `xml:"phone,attr"`
	Role  string `xml:"role,attr"`
}

type xHashList struct {
	XMLName xml.Name `xml:"hashlist"`
	Version string   `xml:"version,attr"`
	Creator struct {
		CreationDate string `xml:"creationdate"`
		Hostname     string `xml:"hostname"`
		Tool         struct {
			Name    string `xml:",chardata"`
			Version string `xml:"version,attr"`
		} `xml:"tool"`
		Authors  []xAuthor `xml:"author"`
		Location string    `xml:"location"`
		Comment  string    `xml:"comment"`
	} `xml:"creatorinfo"`
	Process struct {
		Process  string   `xml:"process"`
		RootHash *xEntry  `xml:"roothash"`
		Ignore   []string `xml:"ignore>pattern"`
	} `xml:"processinfo"`
	Hashes struct {
		Entries []xEntry `xml:",any"`
	} `xml:"hashes"`
	References []struct {
		Path string `xml:"path"`
		C4   string `xml:"c4"`
	} `xml:"references>hashlistreference"`
}

// parseTime reads an xs:dateTime ("" gives the zero time).
func parseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not an xs:dateTime: %q", s)
}

func parseHashes(xs []xHashValue, dir bool) ([]Hash, error) {
	var out []Hash
	for _, x := range xs {
		switch x.XMLName.Local {
		case "c4", "md5", "sha1", "xxh128", "xxh3", "xxh64", "xxh32":
		default:
			continue // metadata and what a later version may add
		}
		d, err := parseTime(x.HashDate)
		if err != nil {
			return nil, err
		}
		h := Hash{Format: x.XMLName.Local, Value: strings.TrimSpace(x.Value), Action: Action(x.Action), Date: d}
		if !dir {
			switch h.Action {
			case Original, Verified, Failed, "":
			default:
				return nil, fmt.Errorf("unknown action %q", x.Action)
			}
		}
		out = append(out, h)
	}
	return out, nil
}

func parseDirHash(x *xEntry, path string) (DirHash, error) {
	d := DirHash{Path: path}
	var err error
	if d.ModTime, err = parseTime(x.Path.ModDate); err != nil {
		return d, err
	}
	if x.Content == nil || x.Structure == nil {
		return d, fmt.Errorf("directory hash of %q without content or structure", path)
	}
	if d.Content, err = parseHashes(x.Content.Hashes, true); err != nil {
		return d, err
	}
	d.Structure, err = parseHashes(x.Structure.Hashes, true)
	return d, err
}

// ParseGeneration parses an ASC MHL v2.0 generation file.
func ParseGeneration(data []byte) (*Generation, error) {
	var x xHashList
	if err := xml.NewDecoder(bytes.NewReader(data)).Decode(&x); err != nil {
		return nil, err
	}
	if x.XMLName.Space != nsHashList {
		return nil, fmt.Errorf("root element in namespace %q, not %q", x.XMLName.Space, nsHashList)
	}
	if x.Version != "2.0" {
		return nil, fmt.Errorf("version %q, not 2.0", x.Version)
	}
	g := &Generation{Process: Process(strings.TrimSpace(x.Process.Process))}
	var err error
	c := &g.Creator
	if c.Date, err = parseTime(x.Creator.CreationDate); err != nil {
		return nil, err
	}
	c.Hostname = x.Creator.Hostname
	c.Tool = x.Creator.Tool.Name
	c.ToolVersion = x.Creator.Tool.Version
	for _, a := range x.Creator.Authors {
		c.Authors = append(c.Authors, Author{Name: a.Name, Email: a.Email, Phone: a.Phone, Role: a.Role})
	}
	c.Location, c.Comment = x.Creator.Location, x.Creator.Comment
	g.Ignore = x.Process.Ignore
	if x.Process.RootHash != nil {
		r, err := parseDirHash(x.Process.RootHash, "")
		if err != nil {
			return nil, err
		}
		g.Root = &r
	}
	for i := range x.Hashes.Entries {
		e := &x.Hashes.Entries[i]
		p := e.Path.Value
		switch e.XMLName.Local {
		case "hash":
			f := FileHash{Path: p, Size: -1, PreviousPath: e.PreviousPath}
			if e.Path.Size != "" {
				if f.Size, err = strconv.ParseInt(strings.TrimSpace(e.Path.Size), 10, 64); err != nil || f.Size < 0 {
					return nil, fmt.Errorf("size of %q: %q is not a size", p, e.Path.Size)
				}
			}
			if f.ModTime, err = parseTime(e.Path.ModDate); err != nil {
				return nil, err
			}
			if f.Hashes, err = parseHashes(e.Hashes, false); err != nil {
				return nil, fmt.Errorf("%q: %w", p, err)
			}
			g.Files = append(g.Files, f)
		case "directoryhash":
			d, err := parseDirHash(e, p)
			if err != nil {
				return nil, err
			}
			g.Dirs = append(g.Dirs, d)
		}
	}
	for _, r := range x.References {
		g.References = append(g.References, Reference{Path: r.Path, C4: strings.TrimSpace(r.C4)})
	}
	return g, nil
}

type xChain struct {
	XMLName   xml.Name `xml:"ascmhldirectory"`
	Hashlists []struct {
		Seq  string `xml:"sequencenr,attr"`
		Path string `xml:"path"`
		C4   string `xml:"c4"`
	} `xml:"hashlist"`
}

// chainEntry is one generation the chain lists.
type chainEntry struct {
	Seq      int
	FileName string
	C4       string
}

// parseChain parses ascmhl_chain.xml.
func parseChain(data []byte) ([]chainEntry, error) {
	var x xChain
	if err := xml.NewDecoder(bytes.NewReader(data)).Decode(&x); err != nil {
		return nil, err
	}
	if x.XMLName.Space != nsDirectory {
		return nil, fmt.Errorf("root element in namespace %q, not %q", x.XMLName.Space, nsDirectory)
	}
	var out []chainEntry
	for _, h := range x.Hashlists {
		seq, err := strconv.Atoi(strings.TrimSpace(h.Seq))
		if err != nil || seq < 1 {
			return nil, fmt.Errorf("sequencenr %q of %q is not a number", h.Seq, h.Path)
		}
		name := strings.TrimSpace(h.Path)
		if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
			return nil, fmt.Errorf("generation path %q is not a file name in the ascmhl folder", h.Path)
		}
		if h.C4 == "" {
			return nil, fmt.Errorf("generation %q has no c4 hash", name)
		}
		out = append(out, chainEntry{Seq: seq, FileName: name, C4: strings.TrimSpace(h.C4)})
	}
	return out, nil
}
