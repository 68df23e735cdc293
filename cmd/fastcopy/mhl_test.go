package main

import (
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/zeebo/xxh3"

	"github.com/fastcopy/fastcopy/internal/mhl"
	"github.com/fastcopy/fastcopy/verify"
)

// mhlseal DIR writes the next ASC MHL generation of DIR with internal/mhl,
// as a copy would: every regular file (the ascmhl folder aside) hashed and
// handed over with its size and mtime.
func cmdMhlseal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mhlseal DIR")
	}
	root := ts.MkAbs(args[0])
	var files []mhl.File
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "ascmhl" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files = append(files, mhl.File{Path: filepath.ToSlash(rel), Size: int64(len(data)), ModTime: info.ModTime(), Sum: verify.Bytes(data)})
		return nil
	})
	ts.Check(err)
	w, err := mhl.WriteGeneration(root, &mhl.NewGeneration{
		Creator: mhl.Creator{ToolVersion: version()},
		Process: mhl.Transfer,
		Files:   files,
	})
	ts.Check(err)
	ts.Logf("wrote generation %d: %s", w.Seq, w.Path)
}

// The elements of an ASC MHL generation and chain that mhlgen reads, with
// encoding/xml: apart from internal/mhl's own reader.
type xmlHashList struct {
	XMLName xml.Name `xml:"urn:ASC:MHL:v2.0 hashlist"`
	Version string   `xml:"version,attr"`
	Creator struct {
		Tool struct {
			Name    string `xml:",chardata"`
			Version string `xml:"version,attr"`
		} `xml:"tool"`
		Comment string `xml:"comment,omitempty"`
	} `xml:"creatorinfo"`
	Process string `xml:"processinfo>process"`
	Hashes  []struct {
		Path struct {
			Name string `xml:",chardata"`
			Size int64  `xml:"size,attr"`
		} `xml:"path"`
		XXH128 struct {
			Sum    string `xml:",chardata"`
			Action string `xml:"action,attr"`
		} `xml:"xxh128"`
	} `xml:"hashes>hash"`
	DirHashes []struct {
		Path string `xml:"path"`
	} `xml:"hashes>directoryhash"`
}

type xmlChain struct {
	XMLName   xml.Name `xml:"urn:ASC:MHL:DIRECTORY:v2.0 ascmhldirectory"`
	HashLists []struct {
		Seq  int    `xml:"sequencenr,attr"`
		Path string `xml:"path"`
		C4   string `xml:"c4"`
	} `xml:"hashlist"`
}

// xmlRoundTrip decodes data into v, encodes v and decodes that into w: the
// generation is well-formed XML, and what encoding/xml reads of it
// survives being written again.
func xmlRoundTrip[T any](data []byte) (T, error) {
	var v, w T
	if err := xml.Unmarshal(data, &v); err != nil {
		return v, err
	}
	again, err := xml.Marshal(&v)
	if err != nil {
		return v, err
	}
	if err := xml.Unmarshal(again, &w); err != nil {
		return v, fmt.Errorf("reading it back: %w", err)
	}
	if !reflect.DeepEqual(v, w) {
		return v, fmt.Errorf("round trip changed it:\n%+v\n%+v", v, w)
	}
	return v, nil
}

// mhlgen DIR SEQ [PATH=ACTION ...] checks that DIR/ascmhl/ascmhl_chain.xml
// lists generation SEQ and no later one, that the generation file is
// well-formed ASC MHL written by fastcopy as a transfer, and that it lists
// exactly the files given, each with the action given and the xxh128 the
// file in DIR has now (hashed here, with xxh3 directly), and its size.
// Directories may be listed as DIR=dir (each directory hash checked to be
// named, no more).
func cmdMhlgen(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: mhlgen DIR SEQ [PATH=ACTION ...]")
	}
	root := ts.MkAbs(args[0])
	seq, err := strconv.Atoi(args[1])
	ts.Check(err)
	data, err := os.ReadFile(filepath.Join(root, "ascmhl", "ascmhl_chain.xml"))
	ts.Check(err)
	chain, err := xmlRoundTrip[xmlChain](data)
	if err != nil {
		ts.Fatalf("ascmhl_chain.xml: %v", err)
	}
	if n := len(chain.HashLists); n != seq || chain.HashLists[n-1].Seq != seq {
		ts.Fatalf("the chain lists %d generations, want %d: %+v", n, seq, chain.HashLists)
	}
	name := chain.HashLists[seq-1].Path
	data, err = os.ReadFile(filepath.Join(root, "ascmhl", name))
	ts.Check(err)
	g, err := xmlRoundTrip[xmlHashList](data)
	if err != nil {
		ts.Fatalf("%s: %v", name, err)
	}
	if g.Version != "2.0" || g.Creator.Tool.Name != "fastcopy" || g.Creator.Tool.Version == "" || g.Process != "transfer" {
		ts.Fatalf("%s: version %q, tool %q %q, process %q", name, g.Version, g.Creator.Tool.Name, g.Creator.Tool.Version, g.Process)
	}
	want := map[string]string{}
	wantDirs := map[string]bool{}
	for _, a := range args[2:] {
		p, act, ok := strings.Cut(a, "=")
		if !ok {
			ts.Fatalf("%q: want PATH=ACTION", a)
		}
		if act == "dir" {
			wantDirs[p] = true
		} else {
			want[p] = act
		}
	}
	got := map[string]string{}
	for _, h := range g.Hashes {
		p := h.Path.Name
		got[p] = h.XXH128.Action
		content, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			ts.Fatalf("%s lists %q: %v", name, p, err)
		}
		s := xxh3.Hash128(content).Bytes()
		if sum := hex.EncodeToString(s[:]); h.XXH128.Sum != sum {
			ts.Fatalf("%s: %q has xxh128 %s, the generation says %s", name, p, sum, h.XXH128.Sum)
		}
		if h.Path.Size != int64(len(content)) {
			ts.Fatalf("%s: %q has %d bytes, the generation says %d", name, p, len(content), h.Path.Size)
		}
	}
	if !reflect.DeepEqual(got, want) {
		ts.Fatalf("%s lists %v, want %v", name, got, want)
	}
	for _, d := range g.DirHashes {
		delete(wantDirs, d.Path)
	}
	if len(wantDirs) > 0 {
		ts.Fatalf("%s has no directoryhash for %v", name, wantDirs)
	}
	ts.Logf("%s: %d files as expected", name, len(got))
}
