package mhl

import (
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/verify"
)

// Action says what a hash entry records (the ascmhl "action" attribute).
type Action string

// The actions of the specification.
const (
	// Original: the first digest recorded for the file in its history.
	Original Action = "original"
	// Verified: the file was hashed again and matched its original digest.
	Verified Action = "verified"
	// Failed: the file was hashed again and did not match.
	Failed Action = "failed"
)

// Process is the kind of process a generation records.
type Process string

// The processes of the specification.
const (
	InPlace  Process = "in-place" // a folder sealed where it is
	Transfer Process = "transfer" // a folder recorded as it was copied
	Flatten  Process = "flatten"  // histories gathered into one list
)

// Tool is the name fastcopy writes into creatorinfo/tool.
const Tool = "fastcopy"

// Author is one creatorinfo/author element.
type Author struct {
	Name, Email, Phone, Role string
}

// Creator is a generation's creatorinfo.
type Creator struct {
	Date        time.Time // creationdate; zero means now when writing
	Hostname    string
	Tool        string // "fastcopy" when written by WriteGeneration
	ToolVersion string
	Authors     []Author
	Location    string
	Comment     string
}

// Hash is one digest of a file or directory: the element's name (xxh128,
// md5, sha1, c4, xxh3, xxh64), its text, and its attributes.
type Hash struct {
	Format string
	Value  string
	Action Action    // "" for directory hashes
	Date   time.Time // hashdate; zero when absent
}

// FileHash is one <hash> element: a file and its digests.
type FileHash struct {
	Path         string // '/'-separated, relative to the history's root
	Size         int64  // -1 when the element has no size attribute
	ModTime      time.Time
	Hashes       []Hash
	PreviousPath string // set when the file was renamed from there
}

// Find returns the digest of the format given, if the entry has one.
func (f *FileHash) Find(format string) (Hash, bool) {
	for _, h := range f.Hashes {
		if h.Format == format {
			return h, true
		}
	}
	return Hash{}, false
}

// DirHash is one <directoryhash> element (or the <roothash>, whose Path is
// ""): the content and structure digests of a directory.
type DirHash struct {
	Path      string
	ModTime   time.Time
	Content   []Hash
	Structure []Hash
}

// Reference is one hashlistreference: a generation of a nested history,
// by its path relative to this history's root, and its C4 ID.
type Reference struct {
	Path string
	C4   string
}

// Generation is one parsed generation file (NNNN_name_date.mhl).
type Generation struct {
	Seq        int    // sequence number, from the chain (or the file name)
	FileName   string // name in the ascmhl folder
	C4         string // C4 ID recorded in the chain ("" when not chained)
	Creator    Creator
	Process    Process
	Root       *DirHash // processinfo/roothash; nil when absent
	Ignore     []string // processinfo/ignore patterns
	Files      []FileHash
	Dirs       []DirHash
	References []Reference
}

// File is a file for WriteGeneration: its path below the root, its size and
// modification time, and the xxh128 the caller computed while reading it
// (and read back). Nothing is read again.
type File struct {
	Path    string // '/'-separated, relative to the root
	Size    int64
	ModTime time.Time
	Sum     verify.Sum
	// Extra are its digests in the generation's other formats
	// (NewGeneration.Formats), keyed by format name, as the generation
	// writes them (hex; a C4 ID for c4), computed in the same read as Sum.
	Extra map[string]string
	// Action is the action to record; "" decides from the history, for
	// each format: the first digest of a path in a format is Original,
	// later ones Verified when they match that original and Failed when
	// they do not.
	Action Action
	// HashDate is when the digest was taken; zero means the generation's
	// creation date.
	HashDate time.Time
}

// Dir is a directory for WriteGeneration: its path below the root and its
// modification time. Directories that hold a listed file need not be
// listed (their modification time is then read from the tree); an empty
// directory is recorded only when listed.
type Dir struct {
	Path    string
	ModTime time.Time
}

// NewGeneration is what WriteGeneration records.
type NewGeneration struct {
	Creator Creator // Tool defaults to "fastcopy"; ToolVersion should be set
	// Formats are the hash formats each file and directory is recorded
	// in (xxh128, xxh64, xxh3, md5, sha1, c4), written in the schema's
	// order whatever the order here; nil means xxh128 alone. A file's
	// xxh128 is its Sum, any other its Extra.
	Formats []string
	Process Process // "" means InPlace
	// Ignore are patterns added to those of the latest generation (or, in
	// a new history, to the defaults: .DS_Store, ascmhl, ascmhl/). Files
	// and directories they match are left out of the generation.
	Ignore []string
	Files  []File
	Dirs   []Dir

	faults *fileio.FaultSet // set by tests (fcfault builds): injected into the writes
}

// Written says what WriteGeneration wrote.
type Written struct {
	Seq  int    // the new generation's sequence number
	Path string // the generation file
	C4   string // its C4 ID, as recorded in ascmhl_chain.xml
}
