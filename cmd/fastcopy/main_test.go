//go:build linux

package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/treecmp"
)

// TestMain makes the test binary act as fastcopy when it is run under that
// name, as the scripts do, and as the tree builder of the cp -a oracle when
// that test runs it as another user.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fastcopy":        func() { os.Exit(Main()) },
		oracleTreeCommand: func() { os.Exit(oracleTreeMain()) },
	})
}

// TestScripts runs testdata/script/*.txtar: one behaviour of the command
// line each, against the real Main, with exact exit codes.
func TestScripts(t *testing.T) {
	t.Parallel()
	// The scripts that run fastcopy as an unprivileged user need a work
	// directory and a binary that user can reach: testscript's own live
	// under private (0700) temporary directories.
	root, err := os.MkdirTemp("", "fastcopy-scripts-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if f := flag.Lookup("testwork"); f != nil && f.Value.String() == "true" { // testscript's flag
		t.Logf("work directories kept in %s", root)
	} else {
		t.Cleanup(func() { removeAll(t, root) })
	}
	bin := ""
	if self, err := exec.LookPath("fastcopy"); err == nil {
		bin = filepath.Join(root, "bin", "fastcopy")
		if err := installBinary(self, bin); err != nil {
			t.Fatal(err)
		}
	}
	testscript.Run(t, testscript.Params{
		Dir:                "testdata/script",
		WorkdirRoot:        root,
		RequireUniqueNames: true,
		Condition:          func(cond string) (bool, error) { return condition(root, cond) },
		Setup: func(env *testscript.Env) error {
			env.Setenv("FASTCOPY_BIN", bin)
			// A -race binary sleeps 1 s at a clean exit by default.
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			// Each script gets its own hash cache, never the user's.
			env.Setenv("XDG_CACHE_HOME", filepath.Join(env.WorkDir, ".cache"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":       cmdExits,
			"treecmp":     cmdTreecmp,
			"mkfifo":      cmdMkfifo,
			"mknod":       cmdMknod,
			"setxattr":    cmdSetxattr,
			"sparsefile":  cmdSparsefile,
			"touchns":     cmdTouchns,
			"inode-same":  cmdInodeSame,
			"ino":         cmdIno,
			"hardlink":    cmdHardlink,
			"notemps":     cmdNotemps,
			"emptydir":    cmdEmptydir,
			"jsonfield":   cmdJSONField,
			"perm":        cmdPerm,
			"setmode":     cmdSetmode,
			"lockdir":     cmdLockdir,
			"chownnobody": cmdChownNobody,
			"lockfile":    cmdLockfile,
			"mountexfat":  cmdMountExfat,
			"mhlseal":     cmdMhlseal,
			"mhlgen":      cmdMhlgen,
			"paths":       cmdPaths,
		},
	})
}

// condition answers the scripts' own conditions, probing the filesystem
// of dir (where the scripts' work directories are) when it must:
//
//	root         the tests run as root
//	nobody       root, with setpriv and a user "nobody" to run commands as
//	fcfault      the binary was built with -tags fcfault (FASTCOPY_FAULTS works)
//	xattr        the filesystem takes user.* extended attributes
//	atimestable  reading a file leaves an access time in the future alone
//	             (relatime or noatime, not strictatime)
//	exfat        mountexfat can mount an exFAT image (an error instead of
//	             false with FASTCOPY_REQUIRE_LOOPFS set)
func condition(dir, cond string) (bool, error) {
	switch cond {
	case "exfat":
		return canMountExfat()
	case "xattr":
		return probe(dir, func(p string) (bool, error) {
			err := unix.Setxattr(p, "user.fastcopy-probe", []byte("1"), 0)
			return err == nil, nil
		})
	case "atimestable":
		return probe(dir, func(p string) (bool, error) {
			future := time.Now().Add(48 * time.Hour)
			if err := os.Chtimes(p, future, time.Unix(1e9, 0)); err != nil {
				return false, err
			}
			if _, err := os.ReadFile(p); err != nil {
				return false, err
			}
			var st unix.Stat_t
			if err := unix.Stat(p, &st); err != nil {
				return false, err
			}
			return unix.TimespecToNsec(st.Atim) == future.UnixNano(), nil
		})
	case "root":
		return os.Geteuid() == 0, nil
	case "nobody":
		ok, _ := canRunAsNobody()
		return ok, nil
	case "fcfault":
		return fileio.FaultsEnabled, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// probe runs check on a fresh file in dir.
func probe(dir string, check func(path string) (bool, error)) (bool, error) {
	f, err := os.CreateTemp(dir, "probe-")
	if err != nil {
		return false, err
	}
	defer os.Remove(f.Name())
	_, err = f.Write([]byte("probe"))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	return check(f.Name())
}

// canRunAsNobody reports whether commands can be run as the user nobody,
// and why not.
func canRunAsNobody() (bool, string) {
	if os.Geteuid() != 0 {
		return false, "not running as root, so cannot switch to another user"
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		return false, "setpriv (util-linux) is not installed"
	}
	if _, err := user.Lookup("nobody"); err != nil {
		return false, "there is no user nobody"
	}
	return true, ""
}

// nobodyCommand returns the command line that runs prog with args as the
// user nobody (uid and gid from the user database), with the supplementary
// group gid when it is not empty, with none otherwise.
func nobodyCommand(gid, prog string, args ...string) (string, []string, error) {
	u, err := user.Lookup("nobody")
	if err != nil {
		return "", nil, err
	}
	groups := "--clear-groups"
	if gid != "" {
		groups = "--groups=" + gid
	}
	return "setpriv", append([]string{"--reuid=" + u.Uid, "--regid=" + u.Gid, groups, "--", prog}, args...), nil
}

// exits [-user nobody] CODE PROG [ARGS...] runs PROG and fails unless it
// exits with exactly CODE. Its stdout and stderr are then those of PROG. With
// -user, PROG runs as that user (only nobody; see the nobody condition);
// fastcopy then means a copy of this binary that user can run.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: exits CODE PROG [ARGS...] (no '!': CODE says what is expected)")
	}
	asNobody := false
	if len(args) > 1 && args[0] == "-user" {
		if args[1] != "nobody" {
			ts.Fatalf("exits: -user takes only nobody")
		}
		asNobody, args = true, args[2:]
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exits [-user nobody] CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad exit code %q", args[0])
	}
	prog, pargs := args[1], args[2:]
	if asNobody {
		if ok, why := canRunAsNobody(); !ok {
			ts.Fatalf("exits -user nobody: %s (guard the line with [nobody])", why)
		}
		if prog == "fastcopy" {
			prog = ts.Getenv("FASTCOPY_BIN")
		}
		prog, pargs, err = nobodyCommand("", prog, pargs...)
		ts.Check(err)
	}
	err = ts.Exec(prog, pargs...)
	got := 0
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		got = ee.ExitCode()
	default:
		ts.Fatalf("exits: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// treecmp [-atime] A B fails unless the trees A and B are alike in every
// property internal/treecmp checks (atime only with -atime); with '!' it
// fails unless they differ.
func cmdTreecmp(ts *testscript.TestScript, neg bool, args []string) {
	var opts treecmp.Options
	if len(args) > 0 && args[0] == "-atime" {
		opts.Atime, args = true, args[1:]
	}
	if len(args) != 2 {
		ts.Fatalf("usage: treecmp [-atime] A B")
	}
	diffs, err := treecmp.Compare(ts.MkAbs(args[0]), ts.MkAbs(args[1]), opts)
	ts.Check(err)
	switch {
	case neg && len(diffs) == 0:
		ts.Fatalf("%s and %s are alike", args[0], args[1])
	case !neg && len(diffs) > 0:
		ts.Fatalf("%s and %s differ:\n%s", args[0], args[1], strings.Join(diffs, "\n"))
	}
}

// mkfifo NAME... makes FIFOs (mode 0644).
func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: mkfifo NAME...")
	}
	for _, a := range args {
		ts.Check(unix.Mkfifo(ts.MkAbs(a), 0o644))
	}
}

// mknod NAME c|b MAJOR MINOR makes a device node (mode 0600; needs root).
func cmdMknod(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 || (args[1] != "c" && args[1] != "b") {
		ts.Fatalf("usage: mknod NAME c|b MAJOR MINOR")
	}
	major, err1 := strconv.ParseUint(args[2], 10, 32)
	minor, err2 := strconv.ParseUint(args[3], 10, 32)
	if err1 != nil || err2 != nil {
		ts.Fatalf("mknod: bad device number %s %s", args[2], args[3])
	}
	mode := uint32(unix.S_IFCHR)
	if args[1] == "b" {
		mode = unix.S_IFBLK
	}
	ts.Check(unix.Mknod(ts.MkAbs(args[0]), mode|0o600, int(unix.Mkdev(uint32(major), uint32(minor)))))
}

// setxattr NAME KEY VALUE sets an extended attribute, not following a
// symlink.
func cmdSetxattr(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: setxattr NAME KEY VALUE")
	}
	ts.Check(unix.Lsetxattr(ts.MkAbs(args[0]), args[1], []byte(args[2]), 0))
}

// sparsefile NAME SIZE [OFFSET...] makes a file of SIZE bytes that is all
// hole but for 4 KiB of data at each OFFSET. Sizes take K, M and G suffixes.
func cmdSparsefile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: sparsefile NAME SIZE [OFFSET...]")
	}
	size := parseSize(ts, args[1])
	f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	ts.Check(err)
	defer f.Close()
	ts.Check(f.Truncate(size))
	island := []byte(strings.Repeat("island\n", 4096/7+1)[:4096])
	for _, o := range args[2:] {
		_, err := f.WriteAt(island, parseSize(ts, o))
		ts.Check(err)
	}
}

func parseSize(ts *testscript.TestScript, s string) int64 {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, s[:len(s)-1]
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		ts.Fatalf("bad size %q", s)
	}
	return n * mult
}

// touchns NAME MTIME [ATIME] sets the times of NAME (not following a
// symlink). A time is nanoseconds since the epoch or RFC 3339 with
// fraction; without ATIME, atime is set to MTIME.
func cmdTouchns(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: touchns NAME MTIME [ATIME]")
	}
	mtime := parseTime(ts, args[1])
	atime := mtime
	if len(args) == 3 {
		atime = parseTime(ts, args[2])
	}
	ts.Check(unix.UtimesNanoAt(unix.AT_FDCWD, ts.MkAbs(args[0]),
		[]unix.Timespec{unix.NsecToTimespec(atime), unix.NsecToTimespec(mtime)}, unix.AT_SYMLINK_NOFOLLOW))
}

func parseTime(ts *testscript.TestScript, s string) int64 {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		ts.Fatalf("bad time %q: want nanoseconds or RFC 3339", s)
	}
	return t.UnixNano()
}

func lstat(ts *testscript.TestScript, name string) *unix.Stat_t {
	var st unix.Stat_t
	ts.Check(unix.Lstat(ts.MkAbs(name), &st))
	return &st
}

// inode-same A B fails unless A and B are the same inode (with '!', unless
// they are not).
func cmdInodeSame(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: inode-same A B")
	}
	a, b := lstat(ts, args[0]), lstat(ts, args[1])
	same := a.Dev == b.Dev && a.Ino == b.Ino
	switch {
	case same && neg:
		ts.Fatalf("%s and %s are the same inode", args[0], args[1])
	case !same && !neg:
		ts.Fatalf("%s and %s are different inodes", args[0], args[1])
	}
}

// ino NAME prints the inode number of NAME (to compare with cmp later: a
// file replaced by temp-then-rename gets a new one).
func cmdIno(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: ino NAME")
	}
	fmt.Fprintf(ts.Stdout(), "%d\n", lstat(ts, args[0]).Ino)
}

// hardlink OLD NEW makes NEW a hard link to OLD.
func cmdHardlink(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: hardlink OLD NEW")
	}
	ts.Check(os.Link(ts.MkAbs(args[0]), ts.MkAbs(args[1])))
}

// notemps DIR fails if any name under DIR ends in .fastcopy-tmp.
func cmdNotemps(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: notemps DIR")
	}
	var left []string
	ts.Check(filepath.WalkDir(ts.MkAbs(args[0]), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasSuffix(d.Name(), ".fastcopy-tmp") {
			left = append(left, p)
		}
		return nil
	}))
	if len(left) > 0 {
		ts.Fatalf("temporary files left behind: %q", left)
	}
}

// emptydir DIR fails unless DIR is an empty directory (nothing written).
func cmdEmptydir(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: emptydir DIR")
	}
	names, err := os.ReadDir(ts.MkAbs(args[0]))
	ts.Check(err)
	if len(names) > 0 {
		var n []string
		for _, e := range names {
			n = append(n, e.Name())
		}
		ts.Fatalf("%s is not empty: %q", args[0], n)
	}
}

// jsonfield FILE PATH WANT parses FILE (or stdout) as JSON and fails
// unless the value at PATH (keys and array indexes joined by dots) prints
// as WANT: strings bare, anything else as compact JSON.
func cmdJSONField(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: jsonfield FILE|stdout PATH WANT")
	}
	var v any
	if err := json.Unmarshal([]byte(ts.ReadFile(args[0])), &v); err != nil {
		ts.Fatalf("%s is not JSON: %v", args[0], err)
	}
	for _, k := range strings.Split(args[1], ".") {
		switch c := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = c[k]; !ok {
				ts.Fatalf("%s: no %q in %s", args[0], k, args[1])
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(c) {
				ts.Fatalf("%s: no element %q in %s (length %d)", args[0], k, args[1], len(c))
			}
			v = c[i]
		default:
			ts.Fatalf("%s: %s: cannot index %T with %q", args[0], args[1], v, k)
		}
	}
	got, ok := v.(string)
	if !ok {
		b, _ := json.Marshal(v)
		got = string(b)
	}
	if (got == args[2]) == neg {
		ts.Fatalf("%s: %s is %s, want %s%s", args[0], args[1], got, map[bool]string{true: "not "}[neg], args[2])
	}
}

// perm NAME OCTAL fails unless NAME's permission bits (with setuid, setgid
// and sticky) are OCTAL.
func cmdPerm(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: perm NAME OCTAL")
	}
	want, err := strconv.ParseUint(args[1], 8, 32)
	if err != nil {
		ts.Fatalf("perm: bad mode %q", args[1])
	}
	if got := lstat(ts, args[0]).Mode & 0o7777; got != uint32(want) {
		ts.Fatalf("%s has mode %04o, want %04o", args[0], got, want)
	}
}

// setmode OCTAL NAME... sets permission bits, setuid, setgid and sticky
// included (testscript's chmod takes only 0-0777).
func cmdSetmode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: setmode OCTAL NAME...")
	}
	m, err := strconv.ParseUint(args[0], 8, 32)
	if err != nil || m > 0o7777 {
		ts.Fatalf("setmode: bad mode %q", args[0])
	}
	for _, a := range args[1:] {
		ts.Check(unix.Chmod(ts.MkAbs(a), uint32(m)))
	}
}

// lockdir DIR takes the lock a running fastcopy holds on its destination,
// until the script ends.
func cmdLockdir(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: lockdir DIR")
	}
	f, err := os.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Defer(func() { f.Close() })
	ts.Check(unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB))
}

// chownnobody NAME... gives NAMEs (not following symlinks) to the user
// nobody and its group.
func cmdChownNobody(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: chownnobody NAME...")
	}
	u, err := user.Lookup("nobody")
	ts.Check(err)
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for _, a := range args {
		ts.Check(os.Lchown(ts.MkAbs(a), uid, gid))
	}
}

// installBinary copies the test binary to dst (mode 0755, in a directory
// anyone can reach) for running as another user.
func installBinary(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// removeAll removes a test's tree, first making its directories writable
// and searchable again (the scripts make read-only ones).
func removeAll(t *testing.T, root string) {
	t.Helper()
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	if err := os.RemoveAll(root); err != nil {
		t.Errorf("removing %s: %v", root, err)
	}
}
