package verify

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestManifestRoundTrip(t *testing.T) {
	t.Parallel()
	in := []ManifestEntry{
		{Sum: Bytes([]byte("a")), Path: "plain.txt"},
		{Sum: Bytes([]byte("b")), Path: "dir with spaces/naïve café.jpg"},
		{Sum: Bytes([]byte("c")), Path: "bad\xffutf8"},
		{Sum: Bytes([]byte("d")), Path: "new\nline"},
		{Sum: Bytes([]byte("e")), Path: `back\slash`},
		{Sum: Bytes([]byte("f")), Path: "cr\rname"},
	}
	var buf bytes.Buffer
	if err := WriteManifest(&buf, in); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{`\` + Hex(in[3].Sum) + `  new\nline`, `\` + Hex(in[4].Sum) + `  back\\slash`} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("manifest lacks escaped line %q:\n%s", want, text)
		}
	}
	out, err := ReadManifest(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("read %d entries, wrote %d", len(out), len(in))
	}
	got := map[string]Sum{}
	for _, e := range out {
		got[e.Path] = e.Sum
	}
	for _, e := range in {
		if got[e.Path] != e.Sum {
			t.Errorf("%q: read %s, wrote %s", e.Path, Hex(got[e.Path]), Hex(e.Sum))
		}
	}
}

func TestReadManifestRejectsMalformedLines(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		"nothex  file\n",
		"0123456789abcdef0123456789abcdef file\n", // one space
		"0123456789abcdef0123456789abcdef  \n",    // no path
		`\0123456789abcdef0123456789abcdef  bad\q` + "\n",
		"XXH128 (name = 0123\n",
	} {
		_, err := ReadManifest(strings.NewReader(line))
		if err == nil {
			t.Errorf("line %q was accepted", line)
		} else if !strings.Contains(err.Error(), "line 1") {
			t.Errorf("error %q does not name the line", err)
		}
	}
}

func TestReadManifestTaggedFormat(t *testing.T) {
	t.Parallel()
	s := Bytes([]byte("x"))
	out, err := ReadManifest(strings.NewReader("# comment\n\nXXH128 (a (1).txt) = " + Hex(s) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].Path != "a (1).txt" || out[0].Sum != s {
		t.Fatalf("got %+v", out)
	}
}

// TestManifestInteroperatesWithXxhsum checks both directions against the
// reference tool: xxhsum -c accepts our manifest, and we accept and agree
// with what xxhsum -H2 writes (for every name xxhsum 0.8.1 can represent).
func TestManifestInteroperatesWithXxhsum(t *testing.T) {
	t.Parallel()
	xxhsum, err := exec.LookPath("xxhsum")
	if err != nil {
		t.Skip("xxhsum not installed (Debian package xxhash): skipping the interoperability check")
	}
	dir := t.TempDir()
	names := []string{"plain", "with space", "naïve café", "bad\xffutf8", "-leading-dash"}
	var entries []ManifestEntry
	for i, n := range names {
		data := bytes.Repeat([]byte{byte(i)}, 1000*i+1)
		if err := os.WriteFile(filepath.Join(dir, n), data, 0o644); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, ManifestEntry{Sum: Bytes(data), Path: n})
	}
	var ours bytes.Buffer
	if err := WriteManifest(&ours, entries); err != nil {
		t.Fatal(err)
	}
	mf := filepath.Join(t.TempDir(), "m.xxh128")
	if err := os.WriteFile(mf, ours.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(xxhsum, "-c", mf)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("xxhsum -c rejected our manifest: %v\n%s", err, out)
	}

	cmd = exec.Command(xxhsum, append([]string{"-H2", "--"}, names...)...)
	cmd.Dir = dir
	theirs, err := cmd.Output()
	if err != nil {
		t.Fatalf("xxhsum -H2: %v", err)
	}
	read, err := ReadManifest(bytes.NewReader(theirs))
	if err != nil {
		t.Fatalf("reading xxhsum's manifest: %v\n%s", err, theirs)
	}
	want := map[string]Sum{}
	for _, e := range entries {
		want[e.Path] = e.Sum
	}
	for _, e := range read {
		if want[e.Path] != e.Sum {
			t.Errorf("%q: xxhsum says %s, we say %s", e.Path, Hex(e.Sum), Hex(want[e.Path]))
		}
		delete(want, e.Path)
	}
	if len(want) != 0 {
		t.Errorf("xxhsum's manifest lacks %v", want)
	}
}

func FuzzManifestLine(f *testing.F) {
	for _, s := range []string{"a", "new\nline", `back\slash`, "..", "\x00", "bad\xff", strings.Repeat("x", 255), "-dash", "cr\r"} {
		f.Add(s, uint64(1), uint64(2))
	}
	f.Fuzz(func(t *testing.T, name string, hi, lo uint64) {
		if name == "" {
			return
		}
		in := []ManifestEntry{{Sum: Sum{Hi: hi, Lo: lo}, Path: name}}
		var buf bytes.Buffer
		if err := WriteManifest(&buf, in); err != nil {
			t.Fatal(err)
		}
		if strings.Count(buf.String(), "\n") != 1 {
			t.Fatalf("one entry made %q", buf.String())
		}
		out, err := ReadManifest(&buf)
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		if len(out) != 1 || out[0] != in[0] {
			t.Fatalf("wrote %+v, read %+v", in, out)
		}
	})
}
