package records

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/internal/preflight"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// TestCheckRefuses holds the refusals of what the records cannot hold,
// each with its message, in the order they are asked.
func TestCheckRefuses(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{MHL: true, Update: true}, "--mhl records every source file as the copy holds it, which -u and --ignore-existing leave unread"},
		{Options{MHL: true, IgnoreExisting: true, ManifestHash: "nope"}, "--mhl records every source file"},
		{Options{Manifest: "m", ManifestHash: "nope"}, `"nope": is not a hash format fastcopy writes`},
		{Options{Manifest: "m", ManifestHash: "c4"}, `"c4": has no coreutils-style manifest`},
		{Options{ManifestHash: "sha256"}, "--manifest-hash sets the format of --manifest (or of --bag's manifest), and neither was given"},
		{Options{MHLHashes: []string{"md5"}}, "--mhl-hash sets the formats of --mhl's generation, and --mhl was not given"},
		{Options{MHL: true, MHLHashes: []string{"sha256"}}, `"sha256": is not a hash format of the ASC MHL specification`},
		{Options{BagHash: "sha256"}, "--bag-hash and --bag-info describe the bag --bag makes, and --bag was not given"},
		{Options{Bag: true, BagHash: "md5"}, `"md5": is not a BagIt manifest format fastcopy writes`},
		{Options{Bag: true, MHL: true}, "--mhl would write DEST's ASC MHL history into the bag's payload"},
		{Options{Bag: true, BagInfo: []string{"no separator"}}, `--bag-info: "no separator" is not KEY=VALUE`},
	} {
		err := c.o.Check()
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Check(%+v) = %v, want %q", c.o, err, c.want)
		} else if _, ok := err.(*refusal.Error); !ok {
			t.Errorf("Check(%+v) = %T, want a *refusal.Error", c.o, err)
		}
	}
}

// TestCheckMakesDestThePayloadOnce holds that --bag copies into DEST/data
// and that a second Check (Run checks again) leaves it there.
func TestCheckMakesDestThePayloadOnce(t *testing.T) {
	o := Options{Bag: true, Dest: "out", BagInfo: []string{"Source-Organization: City Archives"}}
	for i := 0; i < 2; i++ {
		if err := o.Check(); err != nil {
			t.Fatal(err)
		}
		if o.BagRoot != "out" || o.Dest != filepath.Join("out", BagPayload) {
			t.Fatalf("check %d: bag %q, dest %q; want out and out/data", i+1, o.BagRoot, o.Dest)
		}
	}
	if fs, err := o.BagFields(); err != nil || len(fs) != 1 || fs[0].Label != "Source-Organization" || fs[0].Value != "City Archives" {
		t.Fatalf("BagFields = %v, %v", fs, err)
	}
}

// TestFormatsAsked holds the formats each record is written in and the
// extra ones a run computes as it reads its sources.
func TestFormatsAsked(t *testing.T) {
	o := Options{Manifest: "m", ManifestHash: "SHA256", MHL: true, MHLHashes: []string{"md5", "xxh128"}}
	if got := o.ManifestFormat(); got != "sha256" {
		t.Errorf("ManifestFormat = %q", got)
	}
	if got := o.MHLFormatNames(); !reflect.DeepEqual(got, []string{"md5", "xxh128"}) {
		t.Errorf("MHLFormatNames = %q", got)
	}
	var names []string
	for _, f := range o.ExtraFormats() {
		names = append(names, f.Name)
	}
	if !reflect.DeepEqual(names, []string{"md5", "sha256"}) {
		t.Errorf("ExtraFormats = %q, want md5 and sha256 (xxh128 is the copy's own)", names)
	}
	if got := (&Options{}).ExtraFormats(); got != nil {
		t.Errorf("ExtraFormats without records = %v, want nil", got)
	}
	for _, c := range []struct{ bagHash, manifestHash, want string }{
		{"", "", "sha256"}, {"SHA512", "", "sha512"}, {"", "sha512", "sha512"}, {"", "md5", "sha256"},
	} {
		if got := (&Options{BagHash: c.bagHash, ManifestHash: c.manifestHash}).BagFormat(); got != c.want {
			t.Errorf("BagFormat(bag-hash %q, manifest-hash %q) = %q, want %q", c.bagHash, c.manifestHash, got, c.want)
		}
	}
}

// TestCheckPlanRefuses holds the refusals of a manifest or a log inside
// DEST (by another spelling too) and of an ASC MHL history without a
// folder of the copy's.
func TestCheckPlanRefuses(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "dest")
	if err := os.Mkdir(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dest, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	p := preflight.Plan{DstRoot: dest, Roots: []preflight.Root{{Src: "src", DstRel: ""}}}
	o := Options{Manifest: filepath.Join(dir, "link", "m.xxh128")}
	if fi, err := os.Lstat(filepath.Join(dir, "link")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Logf("the symlink case is not run: os.Symlink reported success and made no symlink (Wine makes none)")
	} else if err := o.CheckPlan(p); err == nil || !strings.Contains(err.Error(), "is inside the destination "+quote(dest)) {
		t.Errorf("manifest through a symlink to DEST: %v", err)
	}
	o.Manifest = filepath.Join(dir, "m.xxh128")
	if err := o.CheckPlan(p); err != nil {
		t.Errorf("manifest beside DEST: %v", err)
	}
	if err := CheckLogPath(filepath.Join(dest, "log"), dest); err == nil || !strings.Contains(err.Error(), "the log would be written among the copies it describes") {
		t.Errorf("log inside DEST: %v", err)
	}
	o = Options{MHL: true, Dest: "f"}
	if err := o.CheckPlan(preflight.Plan{DstRoot: dir, OntoFile: true}); err == nil || !strings.Contains(err.Error(), "--mhl records a folder's history") {
		t.Errorf("--mhl onto a file: %v", err)
	}
	p.Roots = []preflight.Root{{Src: "card/ASCMHL", DstRel: "ASCMHL"}}
	if err := o.CheckPlan(p); err == nil || !strings.Contains(err.Error(), "the folder of DEST's ASC MHL history") {
		t.Errorf("a source landing on DEST/ascmhl: %v", err)
	}
}

// TestPrepareBag holds that a dry run makes no payload folder, a real run
// does, and a folder holding the user's files named as tag files is
// refused.
func TestPrepareBag(t *testing.T) {
	root := filepath.Join(t.TempDir(), "bag")
	o := Options{Bag: true, Dest: root, DryRun: true}
	if err := o.Check(); err != nil {
		t.Fatal(err)
	}
	if err := o.PrepareBag(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(o.Dest); !os.IsNotExist(err) {
		t.Fatalf("a dry run made %s: %v", o.Dest, err)
	}
	o.DryRun = false
	if err := o.PrepareBag(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(o.Dest); err != nil || !st.IsDir() {
		t.Fatalf("no payload folder: %v", err)
	}
	if err := os.WriteFile(filepath.Join(root, "bag-info.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := o.PrepareBag(); err == nil || !strings.Contains(err.Error(), "is not a BagIt bag (it has no bagit.txt) but holds bag-info.txt") {
		t.Fatalf("a folder with the user's bag-info.txt: %v", err)
	}
}
