//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/internal/treecmp"
)

// The oracle: cp -a is what "archive semantics" means on Linux. A tree of
// every awkward kind of entry is copied by cp -a and by fastcopy, and the two
// copies must be indistinguishable to treecmp, which also holds each against
// the source.

// oracleTreeCommand is the name under which the test binary builds the
// oracle's source tree, so that it can do so as another user.
const oracleTreeCommand = "fastcopy-oracle-tree"

// oracleTreeMain builds an unprivileged oracle tree at os.Args[1].
func oracleTreeMain() int {
	if len(os.Args) != 2 {
		fmt.Fprintf(os.Stderr, "usage: %s DIR\n", oracleTreeCommand)
		return 2
	}
	if err := buildOracleTree(os.Args[1], false); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", oracleTreeCommand, err)
		return 1
	}
	return 0
}

// treeBuilder makes entries under root by path and remembers the times and
// modes to set last: a mode before a chown would lose setuid, and a
// directory's mtime moves with every entry made in it.
type treeBuilder struct {
	root   string
	err    error
	times  map[string][2]int64 // rel -> atime, mtime
	modes  map[string]uint32   // rel -> permission bits (not symlinks)
	order  []string            // rels in creation order
	future int64               // atimes start here (see buildOracleTree)
	seq    int64
}

func (b *treeBuilder) p(rel string) string { return filepath.Join(b.root, rel) }

func (b *treeBuilder) check(what string, err error) {
	if err != nil && b.err == nil {
		b.err = fmt.Errorf("%s: %w", what, err)
	}
}

// track records rel with mode and a distinct mtime (and atime).
func (b *treeBuilder) track(rel string, mode uint32) {
	b.seq++
	b.order = append(b.order, rel)
	if mode != ^uint32(0) {
		b.modes[rel] = mode
	}
	// Distinct times in the past, nanoseconds all different.
	mt := int64(650_000_000+b.seq*3_155_692)*1e9 + b.seq*123_456_789%1e9 + b.seq
	b.times[rel] = [2]int64{b.future + b.seq*1_000_000_007, mt}
}

func (b *treeBuilder) dir(rel string, mode uint32) {
	b.check("mkdir "+rel, os.Mkdir(b.p(rel), 0o700))
	b.track(rel, mode)
}

func (b *treeBuilder) file(rel, content string, mode uint32) {
	b.check("write "+rel, os.WriteFile(b.p(rel), []byte(content), 0o600))
	b.track(rel, mode)
}

func (b *treeBuilder) symlink(target, rel string) {
	b.check("symlink "+rel, os.Symlink(target, b.p(rel)))
	b.track(rel, ^uint32(0))
}

func (b *treeBuilder) link(old, rel string) {
	b.check("link "+rel, os.Link(b.p(old), b.p(rel)))
}

func (b *treeBuilder) mknod(rel string, mode uint32, dev uint64) {
	b.check("mknod "+rel, unix.Mknod(b.p(rel), mode|0o600, int(dev)))
	b.track(rel, mode&0o7777)
}

// xattr sets an extended attribute; on a filesystem without them it does
// nothing (and neither copy will have any).
func (b *treeBuilder) xattr(rel, key, val string) {
	err := unix.Lsetxattr(b.p(rel), key, []byte(val), 0)
	if err == unix.ENOTSUP {
		return
	}
	b.check("setxattr "+rel+" "+key, err)
}

func (b *treeBuilder) chown(rel string, uid, gid int) {
	b.check("chown "+rel, os.Lchown(b.p(rel), uid, gid))
}

// sparse makes a file of size bytes, data only at the given offsets.
func (b *treeBuilder) sparse(rel string, size int64, offs ...int64) {
	f, err := os.OpenFile(b.p(rel), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		b.check("create "+rel, err)
		return
	}
	defer f.Close()
	b.check("truncate "+rel, f.Truncate(size))
	for i, o := range offs {
		_, err := f.WriteAt(bytes.Repeat([]byte{byte('a' + i)}, 5000), o)
		b.check("write "+rel, err)
	}
	b.track(rel, 0o644)
}

// finish applies modes, then times, deepest first.
func (b *treeBuilder) finish() error {
	if b.err != nil {
		return b.err
	}
	for rel, m := range b.modes {
		if err := unix.Chmod(b.p(rel), m); err != nil {
			return fmt.Errorf("chmod %q: %w", rel, err)
		}
	}
	rels := append([]string(nil), b.order...)
	sort.SliceStable(rels, func(i, j int) bool {
		return strings.Count(rels[i], "/") > strings.Count(rels[j], "/")
	})
	for _, rel := range rels {
		t := b.times[rel]
		ts := []unix.Timespec{unix.NsecToTimespec(t[0]), unix.NsecToTimespec(t[1])}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, b.p(rel), ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("utimes %q: %w", rel, err)
		}
	}
	return nil
}

// buildOracleTree makes the source tree at root (which must not exist).
// Privileged adds what only root can make: devices, other owners, trusted.*
// attributes, entries no one but root can read.
//
// Every access time is set in the future, after the entry's mtime. On a
// relatime (or noatime) mount reading a file then leaves its atime alone, so
// both copies, made one after the other, see the same atimes, and atimes can
// be compared; the test checks that they stayed put, and compares them only
// if they did.
func buildOracleTree(root string, privileged bool) error {
	b := &treeBuilder{
		root:   root,
		times:  map[string][2]int64{},
		modes:  map[string]uint32{},
		future: time.Now().Add(30*24*time.Hour).UnixNano() + 7,
	}
	b.dir(".", 0o755)

	// Contents and odd names.
	b.file("plain.txt", "hello\n", 0o644)
	b.file("empty", "", 0o644)
	b.file("with space.txt", "space\n", 0o644)
	b.file("héllo wörld ✓", "unicode\n", 0o644)
	b.file("bad-\xff\xfe-utf8", "not utf-8\n", 0o644)
	b.file("new\nline", "newline\n", 0o644)
	b.file("-leading-dash", "dash\n", 0o644)
	b.file("--", "dashdash\n", 0o644)
	b.file(strings.Repeat("n", 255), "255-byte name\n", 0o644)
	b.dir(strings.Repeat("D", 255), 0o755)
	b.file(strings.Repeat("D", 255)+"/"+strings.Repeat("f", 255), "both 255\n", 0o644)
	b.file("big", strings.Repeat("0123456789abcdef", 300_000), 0o644) // several buffers
	b.dir("a dir with\nnewline", 0o755)
	b.file("a dir with\nnewline/\xc3\x28", "invalid sequence\n", 0o644)

	// Permission bits, with setuid, setgid and sticky.
	b.dir("modes", 0o755)
	for _, m := range []uint32{0o400, 0o444, 0o500, 0o600, 0o640, 0o644, 0o700, 0o755, 0o777,
		0o1644, 0o2755, 0o4755, 0o6755, 0o7777, 0o4711, 0o2710, 0o1777} {
		b.file(fmt.Sprintf("modes/m%04o", m), fmt.Sprintf("mode %04o\n", m), m)
	}
	if privileged {
		for _, m := range []uint32{0o000, 0o001, 0o200, 0o4000, 0o7000} {
			b.file(fmt.Sprintf("modes/m%04o", m), fmt.Sprintf("mode %04o\n", m), m)
		}
	}
	b.dir("dirmodes", 0o755)
	for _, m := range []uint32{0o700, 0o750, 0o1777, 0o2775, 0o3755, 0o555, 0o500} {
		d := fmt.Sprintf("dirmodes/d%04o", m)
		b.dir(d, m)
		b.file(d+"/inside", "inside\n", 0o644)
		b.dir(d+"/sub", 0o755)
		b.file(d+"/sub/deeper", "deeper\n", 0o600)
	}
	b.dir("dirmodes/readonly", 0o555) // read-only, with contents: modes go on last
	b.file("dirmodes/readonly/a", "a\n", 0o444)
	b.dir("dirmodes/readonly/nested", 0o555)
	b.file("dirmodes/readonly/nested/b", "b\n", 0o444)
	if privileged {
		b.dir("dirmodes/d0000", 0o000)
		b.file("dirmodes/d0000/hidden", "only root gets in\n", 0o600)
		b.dir("dirmodes/d0311", 0o311) // searchable, not listable
		b.file("dirmodes/d0311/x", "x\n", 0o644)
	}

	// Times to the nanosecond, on every kind of entry; before 1970 and far
	// ahead too.
	b.dir("times", 0o755)
	b.file("times/ns", "ns\n", 0o644)
	b.file("times/pre-epoch", "1960\n", 0o644)
	b.file("times/y2100", "2100\n", 0o644)
	b.symlink("ns", "times/link")
	b.dir("times/dir", 0o755)
	b.times["times/ns"] = [2]int64{b.future + 1, 1_234_567_890*1e9 + 123_456_789}
	b.times["times/pre-epoch"] = [2]int64{b.future + 2, -315_619_200*1e9 + 987_654_321}
	b.times["times/y2100"] = [2]int64{4_102_444_800*1e9 + 86_400*1e9, 4_102_444_800*1e9 + 1}
	b.times["times/link"] = [2]int64{b.future + 4, 1_000_000_000*1e9 + 999_999_999}
	b.times["times/dir"] = [2]int64{b.future + 5, 1_500_000_000*1e9 + 500_000_001}

	// Symlinks: relative, absolute, dangling, to directories, chained,
	// with odd targets; none followed.
	b.dir("links", 0o755)
	b.symlink("../plain.txt", "links/rel")
	b.symlink("/etc", "links/abs")
	b.symlink("/nonexistent/fastcopy/target", "links/abs-dangling")
	b.symlink("no-such-file", "links/dangling")
	b.symlink("../modes", "links/dir")
	b.symlink("rel", "links/chain")
	b.symlink("self", "links/self")
	b.symlink("new\nline \xff target", "links/odd-target")
	b.symlink(strings.Repeat("long/", 800), "links/long-target")

	// Hard links: in one directory, across directories, three names, and
	// one whose names are odd.
	b.dir("hard", 0o755)
	b.dir("hard/one", 0o755)
	b.dir("hard/two", 0o755)
	b.file("hard/a", "same inode, one dir\n", 0o640)
	b.link("hard/a", "hard/a2")
	b.file("hard/one/x", "same inode, across dirs\n", 0o644)
	b.link("hard/one/x", "hard/two/y")
	b.link("hard/one/x", "hard/z")
	b.file("hard/new\nline", "odd names\n", 0o600)
	b.link("hard/new\nline", "hard/two/\xff")
	b.file("hard/setuid", "setuid, linked\n", 0o4755)
	b.link("hard/setuid", "hard/one/setuid")
	b.file("hard/empty", "", 0o644)
	b.link("hard/empty", "hard/two/empty")

	// Sparse files: islands of data in holes, a leading hole, a trailing
	// hole, an island at an unaligned offset.
	b.dir("sparse", 0o755)
	b.sparse("sparse/islands", 16<<20, 0, 3<<20, 9<<20+123)
	b.sparse("sparse/leading-hole", 8<<20, 8<<20-5000)
	b.sparse("sparse/all-hole", 4<<20)

	// Special files.
	b.dir("special", 0o755)
	b.check("mkfifo", unix.Mkfifo(b.p("special/fifo"), 0o600))
	b.track("special/fifo", 0o640)
	b.mknod("special/socket", unix.S_IFSOCK|0o755, 0)
	if privileged {
		b.mknod("special/null", unix.S_IFCHR|0o666, unix.Mkdev(1, 3))
		b.mknod("special/blk", unix.S_IFBLK|0o660, unix.Mkdev(7, 200))
		b.mknod("special/setuid-dev", unix.S_IFCHR|0o4600, unix.Mkdev(1, 5))
	}

	// Extended attributes: user.* (empty, binary, long values) on files and
	// directories; as root trusted.* on every kind of entry.
	b.xattr("plain.txt", "user.note", "a note")
	b.xattr("plain.txt", "user.empty", "")
	b.xattr("plain.txt", "user.binary", "\x00\x01\xff\x00end")
	b.xattr("big", "user.long", strings.Repeat("v", 2000))
	b.xattr("modes", "user.dir", "on a directory")
	b.xattr("hard/a", "user.linked", "on a hard-linked file")
	b.xattr("sparse/islands", "user.sparse", "yes")
	b.xattr("dirmodes/readonly", "user.ro", "on a read-only directory")
	b.xattr("modes/m0444", "user.ro", "on a read-only file")
	if privileged {
		b.xattr("plain.txt", "trusted.t", "trusted on a file")
		b.xattr("modes", "trusted.t", "trusted on a directory")
		b.xattr("links/rel", "trusted.t", "trusted on a symlink")
		b.xattr("special/fifo", "trusted.t", "trusted on a fifo")
		b.xattr("special/null", "trusted.t", "trusted on a device")
	}

	// A setgid directory of another group than the builder's own, holding
	// entries of the builder's group: a copy made into the directory once
	// it has its setgid bit (a rerun) must still get their group.
	gid := 5678
	if !privileged {
		gid = supplementaryGroup()
	}
	if gid >= 0 {
		b.dir("setgid-group", 0o2775)
		b.chown("setgid-group", -1, gid)
		b.file("setgid-group/own-group", "own group\n", 0o644)
		b.chown("setgid-group/own-group", -1, os.Getegid())
		b.dir("setgid-group/own-group-dir", 0o755)
		b.chown("setgid-group/own-group-dir", -1, os.Getegid())
		b.file("setgid-group/dir-group", "the directory's group\n", 0o644)
		b.chown("setgid-group/dir-group", -1, gid)
	}

	// Owners other than the builder's (root only): files, a setuid
	// program of another user, a directory, a symlink, a fifo.
	if privileged {
		b.dir("owners", 0o755)
		b.file("owners/other", "other owner\n", 0o644)
		b.chown("owners/other", 1234, 5678)
		b.file("owners/setuid-other", "setuid of uid 1234\n", 0o6755)
		b.chown("owners/setuid-other", 1234, 5678)
		b.file("owners/group-only", "group 5678\n", 0o2750)
		b.chown("owners/group-only", 0, 5678)
		b.dir("owners/dir", 0o2770)
		b.file("owners/dir/in", "in\n", 0o640)
		b.chown("owners/dir/in", 1234, 5678)
		b.chown("owners/dir", 1234, 5678)
		b.symlink("other", "owners/link")
		b.chown("owners/link", 2345, 6789)
		b.check("mkfifo", unix.Mkfifo(b.p("owners/fifo"), 0o600))
		b.track("owners/fifo", 0o620)
		b.chown("owners/fifo", 1234, 5678)
	}
	return b.finish()
}

// supplementaryGroup returns a group of the process other than its
// effective one, or -1.
func supplementaryGroup() int {
	groups, err := os.Getgroups()
	if err != nil {
		return -1
	}
	for _, g := range groups {
		if g != os.Getegid() {
			return g
		}
	}
	return -1
}

// atimes snapshots the access time of every entry under root.
func atimes(t *testing.T, root string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		out[p] = unix.TimespecToNsec(st.Atim)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTimes(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// runner runs commands directly or as the user nobody.
type runner struct {
	t      *testing.T
	nobody bool
	group  string // for nobody: a supplementary group ("" for none)
	bin    string // where fastcopy and the tree builder are, for nobody
	cache  string // XDG_CACHE_HOME for fastcopy: a hash cache of this test's own
}

func (r *runner) run(prog string, args ...string) (stdout, stderr string, code int) {
	r.t.Helper()
	if r.nobody {
		if prog == "fastcopy" || prog == oracleTreeCommand {
			prog = filepath.Join(r.bin, prog)
		}
		var err error
		prog, args, err = nobodyCommand(r.group, prog, args...)
		if err != nil {
			r.t.Fatal(err)
		}
	}
	if r.cache == "" {
		// Never the user's hash cache; writable by the unprivileged user.
		r.cache = r.t.TempDir()
		if err := os.Chmod(r.cache, 0o777); err != nil {
			r.t.Fatal(err)
		}
	}
	cmd := exec.Command(prog, args...)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+r.cache, "GORACE=atexit_sleep_ms=0")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		r.t.Fatalf("%s: %v", prog, err)
	}
	return out.String(), errb.String(), code
}

func (r *runner) mustRun(prog string, args ...string) string {
	r.t.Helper()
	out, errs, code := r.run(prog, args...)
	if code != 0 {
		r.t.Fatalf("%s %q: exit status %d\nstdout:\n%s\nstderr:\n%s", prog, args, code, out, errs)
	}
	return out
}

func TestOracleCpA(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("cp"); err != nil {
		t.Skip("cp (coreutils) is not installed: it is the oracle")
	}
	t.Run("root", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root: devices, other owners and trusted.* attributes")
		}
		work := t.TempDir()
		if err := buildOracleTree(filepath.Join(work, "src"), true); err != nil {
			t.Fatal(err)
		}
		oracle(t, &runner{t: t}, work)
	})
	t.Run("unprivileged", func(t *testing.T) {
		if os.Geteuid() != 0 {
			work := t.TempDir()
			t.Cleanup(func() { removeAll(t, work) }) // read-only directories
			if err := buildOracleTree(filepath.Join(work, "src"), false); err != nil {
				t.Fatal(err)
			}
			oracle(t, &runner{t: t}, work)
			return
		}
		if ok, why := canRunAsNobody(); !ok {
			t.Skip("cannot run as an unprivileged user: " + why)
		}
		// As root, build the tree and copy it as nobody, in a directory
		// nobody owns, with the binary where nobody can run it.
		work, err := os.MkdirTemp("", "fastcopy-oracle-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { removeAll(t, work) })
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(work, "bin")
		for _, name := range []string{"fastcopy", oracleTreeCommand} {
			if err := installBinary(self, filepath.Join(bin, name)); err != nil {
				t.Fatal(err)
			}
		}
		u, err := user.Lookup("nobody")
		if err != nil {
			t.Fatal(err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chmod(work, 0o755); err != nil {
			t.Fatal(err)
		}
		data := filepath.Join(work, "data")
		if err := os.Mkdir(data, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(data, uid, gid); err != nil {
			t.Fatal(err)
		}
		r := &runner{t: t, nobody: true, bin: bin}
		// A supplementary group lets the tree hold a setgid directory of
		// another group than the copier's own (see buildOracleTree).
		if g, err := user.LookupGroup("users"); err == nil && g.Gid != u.Gid {
			r.group = g.Gid
		} else {
			t.Log("no group users to add nobody to: the setgid-directory case is left out")
		}
		r.mustRun(oracleTreeCommand, filepath.Join(data, "src"))
		oracle(t, r, data)
	})
}

// oracle copies work/src with cp -a and with fastcopy and compares.
func oracle(t *testing.T, r *runner, work string) {
	src, cpCopy, fcCopy := filepath.Join(work, "src"), filepath.Join(work, "cp"), filepath.Join(work, "fastcopy")
	before := atimes(t, src)
	r.mustRun("cp", "-a", "--", src, cpCopy)
	r.mustRun("fastcopy", "-q", src, fcCopy)
	opts := treecmp.Options{Atime: sameTimes(before, atimes(t, src))}
	if !opts.Atime {
		// A strictatime mount moves atimes on every read, so the copy
		// made second saw later ones. Not fastcopy's doing.
		t.Log("the source's access times moved while it was copied (a strictatime mount?): atimes not compared")
	}
	wantSame := func(stage string) {
		t.Helper()
		fromCp, err := treecmp.Compare(src, cpCopy, opts)
		if err != nil {
			t.Fatal(err)
		}
		fromFc, err := treecmp.Compare(src, fcCopy, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(fromCp) > 0 {
			t.Logf("%s: cp -a's copy differs from the source (so may fastcopy's):\n%s", stage, strings.Join(fromCp, "\n"))
		}
		if onlyFc, onlyCp := setDiff(fromFc, fromCp), setDiff(fromCp, fromFc); len(onlyFc)+len(onlyCp) > 0 {
			t.Errorf("%s: fastcopy's copy and cp -a's differ from the source differently\nonly fastcopy's:\n%s\nonly cp -a's:\n%s",
				stage, strings.Join(onlyFc, "\n"), strings.Join(onlyCp, "\n"))
		}
		direct, err := treecmp.Compare(cpCopy, fcCopy, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(direct) > 0 {
			t.Errorf("%s: cp -a's copy (a) and fastcopy's (b) differ:\n%s", stage, strings.Join(direct, "\n"))
		}
	}
	wantSame("first copy")

	// A rerun finds everything in place: nothing copied, nothing failed,
	// nothing moved.
	out := r.mustRun("fastcopy", "--json", src, fcCopy)
	var rep struct {
		Copied, Failed, Skipped int64
		Linked                  int64 `json:"hardlinked"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("rerun --json: %v\n%s", err, out)
	}
	if rep.Copied != 0 || rep.Failed != 0 || rep.Linked != 0 || rep.Skipped == 0 {
		t.Errorf("rerun onto an up-to-date copy: want nothing copied or linked, got %s", out)
	}
	wantSame("after a rerun")

	// A forced rerun rewrites every file into directories that now have
	// their final modes (setgid ones among them) and relinks hard links.
	r.mustRun("fastcopy", "-q", "--force", src, fcCopy)
	wantSame("after a forced rerun")
}

// setDiff returns the elements of a not in b.
func setDiff(a, b []string) []string {
	in := map[string]bool{}
	for _, s := range b {
		in[s] = true
	}
	var out []string
	for _, s := range a {
		if !in[s] {
			out = append(out, s)
		}
	}
	return out
}
