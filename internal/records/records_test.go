package records

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/internal/bagit"
	"github.com/fastcopy/fastcopy/internal/digest"
	"github.com/fastcopy/fastcopy/verify"
)

func formats(t *testing.T, names ...string) []*digest.Format {
	t.Helper()
	var out []*digest.Format
	for _, n := range names {
		f, ok := digest.Lookup(n)
		if !ok {
			t.Fatalf("no format %q", n)
		}
		out = append(out, f)
	}
	return out
}

func TestSetLinesLastDigestCountsAndMissingFails(t *testing.T) {
	var s Set
	s.Add(Listed{Path: "a", Sum: verify.Bytes([]byte("old")), Extra: map[string]string{"sha256": "old"}})
	s.Add(Listed{Path: "b", Sum: verify.Bytes([]byte("b"))})
	s.Add(Listed{Path: "a", Sum: verify.Bytes([]byte("new")), Extra: map[string]string{"sha256": "new"}})

	lines, failed := s.Lines(XXH128)
	sort.Slice(lines, func(i, j int) bool { return lines[i].Path < lines[j].Path })
	want := []verify.DigestLine{{Digest: verify.Hex(verify.Bytes([]byte("new"))), Path: "a"}, {Digest: verify.Hex(verify.Bytes([]byte("b"))), Path: "b"}}
	if !reflect.DeepEqual(lines, want) || len(failed) != 0 {
		t.Fatalf("xxh128 lines %v, failed %v; want %v and none", lines, failed, want)
	}

	lines, failed = s.Lines("sha256")
	if len(lines) != 1 || lines[0] != (verify.DigestLine{Digest: "new", Path: "a"}) {
		t.Fatalf("sha256 lines %v, want a's last digest alone", lines)
	}
	if len(failed) != 1 || failed[0].Path != "b" || !strings.Contains(failed[0].Err.Error(), "no sha256 digest of the source for the record") {
		t.Fatalf("sha256 failures %v, want b without a digest", failed)
	}
}

func TestManifestWriteIsSortedAndAtomic(t *testing.T) {
	dir := t.TempDir()
	var s Set
	s.Add(Listed{Path: "z/last", Extra: map[string]string{"sha256": "22"}})
	s.Add(Listed{Path: "first", Extra: map[string]string{"sha256": "11"}})
	s.Add(Listed{Path: "none"})
	m := Manifest{Path: filepath.Join(dir, "SHA256SUMS"), Format: "sha256", TempSuffix: ".fastcopy-tmp"}
	failed, err := m.Write(&s)
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 1 || failed[0].Path != "none" {
		t.Fatalf("failed %v, want none", failed)
	}
	got, err := os.ReadFile(m.Path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "11  first\n22  z/last\n"; string(got) != want {
		t.Fatalf("manifest %q, want %q", got, want)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("the directory holds %d entries, want the manifest alone (no temporary left)", len(ents))
	}

	m.Path = filepath.Join(dir, "missing", "SUMS")
	if _, err := m.Write(&s); err == nil || !strings.Contains(err.Error(), "writing manifest") {
		t.Fatalf("a manifest in a missing directory: %v, want the write refused", err)
	}
}

func TestDir(t *testing.T) {
	sep := string(filepath.Separator)
	for in, want := range map[string]string{
		"m":       ".",
		sep + "m": sep,
		"a" + sep + "link" + sep + ".." + sep + "m": "a" + sep + "link" + sep + "..",
	} {
		if got := Dir(in); got != want {
			t.Errorf("Dir(%q) = %q, want %q", in, got, want)
		}
	}
}

// reader is a verify.Source over bytes.
type reader struct{ b []byte }

func (r *reader) ReadFull(buf []byte, off int64) (int, error) {
	if off >= int64(len(r.b)) {
		return 0, nil
	}
	return copy(buf, r.b[off:]), nil
}
func (r *reader) AdviseSequential() {}

func TestHashesStreamFeedsEveryFormatOnce(t *testing.T) {
	fs := formats(t, "sha256", "md5")
	pool := 0
	h := Hashes{Formats: fs,
		Get: func() *[]byte { pool++; b := make([]byte, verify.BufSize); return &b },
		Put: func(*[]byte) { pool-- },
	}
	small := bytes.Repeat([]byte("s"), 1000)
	large := bytes.Repeat([]byte("0123456789abcdef"), (3*verify.BufSize+100)/16)
	for name, data := range map[string][]byte{"one piece": small, "many pieces": large} {
		buf := make([]byte, verify.BufSize)
		var copied []byte
		sum, n, extra, err := h.Stream(&reader{data}, int64(len(data)), buf, func(p []byte, off int64) error {
			copied = append(copied, p...)
			return nil
		})
		if err != nil || n != int64(len(data)) || sum != verify.Bytes(data) || !bytes.Equal(copied, data) {
			t.Fatalf("%s: sum %x n %d err %v; the sink got %d bytes", name, sum, n, err, len(copied))
		}
		set := digest.NewSet(fs)
		set.Write(data)
		if !reflect.DeepEqual(extra, set.Sums()) {
			t.Fatalf("%s: extra digests %v, want %v", name, extra, set.Sums())
		}
	}
	if pool != 0 {
		t.Fatalf("%d buffers borrowed and not given back", pool)
	}

	none := Hashes{}
	if _, _, extra, err := none.Stream(&reader{small}, int64(len(small)), make([]byte, verify.BufSize), func([]byte, int64) error { return nil }); err != nil || extra != nil {
		t.Fatalf("without extra formats: extra %v, err %v; want none", extra, err)
	}
	failing := errors.New("sink failed")
	if _, _, extra, err := h.Stream(&reader{large}, int64(len(large)), make([]byte, verify.BufSize), func([]byte, int64) error { return failing }); !errors.Is(err, failing) || extra != nil {
		t.Fatalf("a failing sink: extra %v, err %v; want its error and no digests", extra, err)
	}
}

func TestHashesFromCacheAndEmpty(t *testing.T) {
	h := Hashes{Formats: formats(t, "sha256")}
	if _, ok := h.FromCache(map[string]string{"md5": "x"}); ok {
		t.Fatal("an entry without sha256 vouched for a run that needs it")
	}
	if ds, ok := h.FromCache(map[string]string{"sha256": "x"}); !ok || ds["sha256"] != "x" {
		t.Fatalf("FromCache = %v, %v; want the entry's digests", ds, ok)
	}
	if got := h.Empty()["sha256"]; got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatalf("sha256 of no bytes: %q", got)
	}
	var none Hashes
	if ds, ok := none.FromCache(nil); !ok || ds != nil || none.Empty() != nil {
		t.Fatal("without extra formats every entry vouches, with no digests")
	}
}

func TestMergeBagInfo(t *testing.T) {
	f := func(l, v string) bagit.WriteField { return bagit.WriteField{Label: l, Value: v} }
	old := []bagit.WriteField{f("Source-Organization", "Old"), f("Contact-Name", "A"), f("source-organization", "Older"), f("Bagging-Date", "x")}
	given := []bagit.WriteField{f("Source-Organization", "New"), f("External-Identifier", "id"), f("Source-Organization", "Newer")}
	got := MergeBagInfo(old, given)
	want := []bagit.WriteField{f("Source-Organization", "New"), f("Source-Organization", "Newer"), f("Contact-Name", "A"), f("Bagging-Date", "x"), f("External-Identifier", "id")}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("merged %v, want %v", got, want)
	}
	if got := BagOtherFormat("manifest-md5.txt"); got != "md5" {
		t.Fatalf("BagOtherFormat = %q", got)
	}
}

func TestFormatsOfMHL(t *testing.T) {
	if !IsMHLFormat(" XXH64 ") || IsMHLFormat("sha256") || !IsMHLFolder("ASCMHL") || IsMHLFolder("ascmhl2") {
		t.Fatal("ASC MHL formats or folder misjudged")
	}
}
