package copyengine_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// manifestRefused runs a copy of src into dst with --manifest m and wants it
// refused before anything is written: the verified copy of the source's
// manifest.txt must not be replaced by the manifest.
func manifestRefused(t *testing.T, opt copyengine.Options, check string) {
	t.Helper()
	_, err := runEngine(t, opt)
	var re *copyengine.RefusalError
	if !errors.As(err, &re) {
		t.Fatalf("--manifest %s: run returned %v, want a refusal", opt.Manifest, err)
	}
	if b, err := os.ReadFile(check); err == nil {
		t.Errorf("%s was written (%q) although the run was refused", check, b)
	}
}

// TestManifestInsideDestByAnotherName: a manifest path that reaches DEST by
// another spelling (a bind mount of DEST, a case-folding filesystem, a
// --names mapping) is refused like one spelled inside DEST.
func TestManifestInsideDestByAnotherName(t *testing.T) {
	t.Parallel()
	t.Run("bind mount", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("a bind mount needs root")
		}
		base := scratchDir(t)
		src, dst, bind := filepath.Join(base, "src"), filepath.Join(base, "dst"), filepath.Join(base, "bind")
		writeFile(t, filepath.Join(src, "manifest.txt"), []byte("important user data\n"))
		writeFile(t, filepath.Join(src, "sub", "a"), []byte("x\n"))
		noErr(t, os.MkdirAll(dst, 0o755))
		noErr(t, os.MkdirAll(bind, 0o755))
		if err := syscall.Mount(dst, bind, "", syscall.MS_BIND, ""); err != nil {
			t.Skipf("bind mount: %v", err)
		}
		t.Cleanup(func() { syscall.Unmount(bind, syscall.MNT_DETACH) })
		opt := copyengine.Options{Sources: []string{src + "/"}, Dest: dst, Manifest: filepath.Join(bind, "manifest.txt")}
		manifestRefused(t, opt, filepath.Join(dst, "manifest.txt"))
		opt.Manifest = filepath.Join(bind, "sub", "other.txt")
		manifestRefused(t, opt, filepath.Join(dst, "sub", "a"))
	})
	t.Run("exFAT case", func(t *testing.T) {
		fs := loopfs.MountFUSE(t, loopfs.ExFAT(64<<20))
		base := scratchDir(t)
		src, dst := filepath.Join(base, "src"), filepath.Join(fs.Dir, "dst")
		writeFile(t, filepath.Join(src, "manifest.txt"), []byte("important user data\n"))
		noErr(t, os.MkdirAll(dst, 0o755))
		opt := copyengine.Options{Sources: []string{src + "/"}, Dest: dst, Manifest: filepath.Join(dst, "MANIFEST.TXT")}
		manifestRefused(t, opt, filepath.Join(dst, "manifest.txt"))
	})
	t.Run("names decode", func(t *testing.T) {
		base := scratchDir(t)
		src, dst := filepath.Join(base, "src"), filepath.Join(base, "dst")
		writeFile(t, filepath.Join(src, "a\uff1ab"), []byte("important user data\n"))
		writeFile(t, filepath.Join(src, "other"), []byte("y\n"))
		noErr(t, os.MkdirAll(dst, 0o755))
		opt := copyengine.Options{Sources: []string{src + "/"}, Dest: dst, Names: copyengine.NamesDecode, Manifest: filepath.Join(dst, "a:b")}
		manifestRefused(t, opt, filepath.Join(dst, "a:b"))
	})
}
