package copyengine_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
)

// TestDryRunRefusesManifestInsideDest: a dry run takes the real run's
// decisions, refusals too: a manifest inside DEST, which the real run
// refuses before it writes anything, is refused by the dry run as well,
// where it used to pass as if the run could go ahead.
func TestDryRunRefusesManifestInsideDest(t *testing.T) {
	tmp := t.TempDir()
	src, dst := filepath.Join(tmp, "src"), filepath.Join(tmp, "dst")
	writeFile(t, filepath.Join(src, "a"), []byte("a"))
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dry := range []bool{false, true} {
		_, err := copyengine.Run(t.Context(), copyengine.Options{Sources: []string{src}, Dest: dst, Manifest: filepath.Join(dst, "sums.xxh"), DryRun: dry})
		var ref *copyengine.RefusalError
		if !errors.As(err, &ref) {
			t.Errorf("dry run %v: %v, want the refusal of a manifest inside the destination", dry, err)
		}
	}
	if ents, _ := os.ReadDir(dst); len(ents) != 0 {
		t.Errorf("the refused runs wrote %d entries into the destination", len(ents))
	}
}
