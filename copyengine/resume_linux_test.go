package copyengine_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
)

// TestImmutableLeftoverNamed: a leftover temporary that cannot be removed
// (chattr +i or +a) fails its file with a message naming the temporary and
// saying how to remove it, not a bare "create: file exists".
func TestImmutableLeftoverNamed(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("skipping: chattr +i needs root")
	}
	for _, attr := range []string{"+i", "+a"} {
		t.Run(attr, func(t *testing.T) {
			scr := scratchDir(t)
			src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
			writeFile(t, filepath.Join(src, "f"), pattern(91, 5000))
			tmp := filepath.Join(dst, ".f"+tempSuffix)
			writeFile(t, tmp, pattern(92, 100))
			tempproofRecordKept(t, dst, ".f"+tempSuffix) // an interrupted run's
			if out, err := sbin("chattr", attr, tmp); err != nil {
				t.Skipf("skipping: chattr %s on the scratch filesystem: %v: %s", attr, err, out)
			}
			t.Cleanup(func() { _, _ = sbin("chattr", "-i", "-a", tmp) })
			var ev events
			_, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, OnEvent: ev.record})
			fails := ev.failures()
			t.Logf("run: %v, failures %v", err, fails)
			if !errors.Is(err, copyengine.ErrSomeFailed) || fails["f"] == nil {
				t.Fatalf("run: %v, failures %v; want f failed", err, fails)
			}
			if msg := fails["f"].Error(); !strings.Contains(msg, tmp) || !strings.Contains(msg, "chattr -i -a") {
				t.Errorf("f failed with %q; want it to name %s and say to remove it with chattr -i -a", msg, tmp)
			}
		})
	}
}
