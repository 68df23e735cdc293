//go:build linux

package main

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSetuidNeverWithoutOwner copies, as the user nobody, root's setuid and
// setgid files (one large, two alike so that one may be placed by sharing
// the other's data, one in a setgid directory) while watching every name
// and temporary of the destination. The copies cannot be root's, so no
// copy may carry setuid or setgid at any moment, temporary or final; a
// temporary still being written has mode 0600 or the copy's final mode.
func TestSetuidNeverWithoutOwner(t *testing.T) {
	t.Parallel()
	if ok, why := canRunAsNobody(); !ok {
		t.Skip("skipping: " + why)
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	bin := buildFastcopy(t)
	work := scratchFS(t, 2<<30)
	src, out := filepath.Join(work, "src"), filepath.Join(work, "out")
	dst := filepath.Join(out, "dst")

	const bigSize = 512 << 20
	files := map[string]uint32{ // name: mode
		"big":        0o4755,
		"setgid":     0o2755,
		"both":       0o6755,
		"dup1":       0o4755,
		"dup2":       0o4755,
		"sgdir/file": 0o2755,
	}
	if err := os.MkdirAll(filepath.Join(src, "sgdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		data := []byte("#!/bin/sh\necho " + name + "\n")
		if strings.HasPrefix(name, "dup") {
			data = []byte(strings.Repeat("the same content in both\n", 4000))
		}
		if err := os.WriteFile(filepath.Join(src, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(filepath.Join(src, "big"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = syscall.Fallocate(int(f.Fd()), 0, 0, bigSize) // data to copy, not holes
	f.Close()
	if err != nil {
		t.Skipf("skipping: fallocate: %v", err)
	}
	for name, m := range files {
		if err := syscall.Chmod(filepath.Join(src, name), m); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Chmod(filepath.Join(src, "sgdir"), 0o2755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(out, uid, gid); err != nil {
		t.Fatal(err)
	}

	// Every name a copy can have on its way: the temporary, the final name,
	// its own name in its directory while that is made under its temporary
	// name.
	var watch []string
	for name := range files {
		dir, base := filepath.Split(name)
		watch = append(watch, filepath.Join(dst, name), filepath.Join(dst, dir, "."+base+".fastcopy-tmp"))
		if dir != "" {
			watch = append(watch, filepath.Join(dst, "."+filepath.Clean(dir)+".fastcopy-tmp", base))
		}
	}
	watch = append(watch, filepath.Join(dst, "sgdir"), filepath.Join(dst, ".sgdir.fastcopy-tmp"))

	prog, args, err := nobodyCommand("", bin, "-q", "--no-cache", src, dst)
	if err != nil {
		t.Fatal(err)
	}
	p := startBinary(t, prog, args...)
	var seen, writing int
	var res result
	for running := true; running; {
		select {
		case err := <-p.done:
			p.done <- err
			res = p.wait(t, 0, 0)
			running = false
		default:
		}
		// One more look after the end: the final names.
		for _, w := range watch {
			var st syscall.Stat_t
			if err := syscall.Lstat(w, &st); err != nil {
				continue
			}
			seen++
			rel, _ := filepath.Rel(dst, w)
			if st.Mode&(syscall.S_ISUID|syscall.S_ISGID) != 0 {
				t.Errorf("%s has mode %04o while it belongs to %d:%d, not root", rel, st.Mode&0o7777, st.Uid, st.Gid)
			}
			if strings.HasSuffix(w, ".fastcopy-tmp") && st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Size > 0 && strings.Contains(w, "big") && st.Size < bigSize {
				writing++
				// 0600, or the copy's final mode (setuid dropped) when
				// creation gives that: never more than the copy will have.
				final := files["big"] &^ (syscall.S_ISUID | syscall.S_ISGID)
				if m := st.Mode & 0o7777; m != 0o600 && m != final {
					t.Errorf("%s had mode %04o while it was written, want 0600 or the copy's %04o", rel, m, final)
				}
			}
		}
		if t.Failed() {
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	if t.Failed() {
		t.FailNow()
	}
	if res.code != 0 {
		t.Fatalf("fastcopy as nobody: exit %d:\n%s", res.code, res.stderr)
	}
	if writing == 0 {
		t.Error("the large file's temporary was never seen while it was written")
	}
	t.Logf("%d looks at the destination's names, %d at the large temporary while it was written", seen, writing)
	for name, m := range files {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(dst, name), &st); err != nil {
			t.Errorf("%s was not copied: %v", name, err)
			continue
		}
		if want := m &^ (syscall.S_ISUID | syscall.S_ISGID); st.Mode&0o7777 != want || int(st.Uid) != uid {
			t.Errorf("%s: mode %04o, owner %d; want %04o (setuid and setgid dropped), owner nobody (%d)", name, st.Mode&0o7777, st.Uid, want, uid)
		}
	}
}
