//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gitignoreSetup gives the test a home of its own, so that neither git
// nor fastcopy reads this machine's git configuration, and skips the test
// when git is not installed.
func gitignoreSetup(t *testing.T) (home string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: git is the oracle of --gitignore")
	}
	home = t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, ".gitconfig"))
	return home
}

// gitignoreGit runs git in dir and returns its standard output.
func gitignoreGit(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %q: %v\n%s", args, err, stderr.Bytes())
	}
	return out
}

// gitignoreWrite writes the files of tree (path -> content) below dir.
func gitignoreWrite(t *testing.T, dir string, tree map[string]string) {
	t.Helper()
	for rel, s := range tree {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// gitignoreFiles lists what dir holds but directories, relative to it,
// sorted, leaving out skip (a directory name) at its top.
func gitignoreFiles(t *testing.T, dir, skip string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel == skip {
				return filepath.SkipDir
			}
			return nil
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// gitignoreRun runs fastcopy with args and returns its exit code and output.
func gitignoreRun(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// The vocabulary of the generated trees: names that the patterns below
// are about, and patterns for every rule of gitignore(5).
var (
	gitignoreDirNames  = []string{"a", "b", "build", "node_modules", "src", "logs", "deep", "sp ace", "#h", "!b", "x[1]", "keep"}
	gitignoreFileNames = []string{"a.log", "keep.log", "x.o", "main.c", "t.tmp", "README", "foo", "bar", "f ", "#f", "!f", "*star", "x[1].txt", "d.txt", "dtxt", "a", "b", "Ab"}
	gitignorePatterns  = []string{
		"*.log", "!keep.log", "build/", "/foo", "a/bar", "**/deep/*.o", "deep/**", "src/**/x.o", "*.o", "!main.c",
		"node_modules/", `\#f`, `\!f`, `f\ `, "f  ", `x\[1\].txt`, "x[1].txt", "[ab]", "[!a]b", "[^A]b", "d?txt", "**/logs",
		"logs/", "!logs/", "*", "!*/", "# comment", "", "a/**/README", "/*.tmp", "!/keep/", "keep/*", "!keep/t.tmp", "#f",
		"!build/", "x[1]/", "[[:upper:]]b", "sp ace/", "*star", `\*star`, "**", "b/**/d.txt", "a**/b", "/a/b", "/README",
		"!*.o", "!foo", "*/", "!x[1].txt", "!#h/", "src/", "!src/a.log", "[a-c].log", "*.c/",
	}
)

// gitignoreTree generates a tree with nested .gitignore files in dir (a
// repository's working tree), its .git/info/exclude, and the file
// core.excludesFile names (excludes).
func gitignoreTree(t *testing.T, rng *rand.Rand, dir, excludes string) {
	t.Helper()
	pick := func(list []string) string { return list[rng.IntN(len(list))] }
	lines := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(pick(gitignorePatterns))
			if rng.IntN(8) == 0 {
				b.WriteString("\r") // a file written on Windows
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	tree := map[string]string{}
	dirs := []string{""}
	for range 12 {
		parent := pick(dirs)
		d := pick(gitignoreDirNames)
		if parent != "" {
			d = parent + "/" + d
		}
		if strings.Count(d, "/") < 4 && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		for range 1 + rng.IntN(5) {
			f := pick(gitignoreFileNames)
			if d != "" {
				f = d + "/" + f
			}
			if !slices.Contains(dirs, f) {
				tree[f] = f
			}
		}
		if d == "" || rng.IntN(2) == 0 {
			g := ".gitignore"
			if d != "" {
				g = d + "/" + g
			}
			s := lines(1 + rng.IntN(6))
			if rng.IntN(6) == 0 {
				s = "\xef\xbb\xbf" + s // a byte order mark
			}
			tree[g] = s
		}
	}
	gitignoreWrite(t, dir, tree)
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A symlink named .gitignore, which git does not follow.
	if rng.IntN(2) == 0 {
		d := filepath.Join(dir, filepath.FromSlash(pick(dirs[1:])))
		_ = os.Remove(filepath.Join(d, ".gitignore"))
		if err := os.Symlink("../.gitignore", filepath.Join(d, ".gitignore")); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), []byte(lines(rng.IntN(3))), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(excludes, []byte(lines(rng.IntN(3))), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGitignoreGitOracle copies generated trees with nested .gitignore
// files, a .git/info/exclude and a core.excludesFile with --gitignore, and
// holds what was copied to what git lists in the same untracked tree
// (git ls-files --cached --others --exclude-standard), file for file.
func TestGitignoreGitOracle(t *testing.T) {
	home := gitignoreSetup(t)
	excludes := filepath.Join(home, "excludes")
	var listed, ignored int
	t.Cleanup(func() {
		t.Logf("git listed %d files and ignored %d", listed, ignored)
		if listed == 0 || ignored == 0 {
			t.Errorf("git listed %d files and ignored %d: the trees test nothing", listed, ignored)
		}
	})
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "src")
			gitignoreGit(t, t.TempDir(), "init", "-q", src)
			gitignoreGit(t, src, "config", "core.excludesFile", excludes)
			gitignoreTree(t, rand.New(rand.NewPCG(seed, 32)), src, excludes)
			var want []string
			for _, p := range strings.Split(string(gitignoreGit(t, src, "ls-files", "--cached", "--others", "--exclude-standard", "-z")), "\x00") {
				if p != "" {
					want = append(want, p)
				}
			}
			slices.Sort(want)
			dst := filepath.Join(t.TempDir(), "dst")
			if code, _, stderr := gitignoreRun("--no-cache", "-q", "--gitignore", src, dst); code != exitOK {
				t.Fatalf("fastcopy --gitignore: exit %d: %s", code, stderr)
			}
			if _, err := os.Lstat(filepath.Join(dst, ".git")); err == nil {
				t.Errorf(".git was copied")
			}
			got := []string{}
			if _, err := os.Stat(dst); err == nil {
				got = gitignoreFiles(t, dst, "")
			}
			all := gitignoreFiles(t, src, ".git")
			listed += len(want)
			ignored += len(all) - len(want)
			if !slices.Equal(got, want) {
				t.Errorf("fastcopy --gitignore copied\n\t%s\ngit lists\n\t%s\nof\n\t%s\nonly fastcopy: %q\nonly git: %q",
					strings.Join(got, "\n\t"), strings.Join(want, "\n\t"), strings.Join(all, "\n\t"), gitignoreMinus(got, want), gitignoreMinus(want, got))
			}
		})
	}
}

func gitignoreMinus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// TestGitignoreSourceInRepository: a SOURCE below a repository's root
// takes the .gitignore files above it, anchored where they are, and the
// repository's info/exclude, as git does for its paths.
func TestGitignoreSourceInRepository(t *testing.T) {
	gitignoreSetup(t)
	repo := filepath.Join(t.TempDir(), "repo")
	gitignoreGit(t, t.TempDir(), "init", "-q", repo)
	gitignoreWrite(t, repo, map[string]string{
		".gitignore":        "*.log\n/sub/top-only\nsub/x/anchored\n",
		".git/info/exclude": "*.info\n",
		"sub/.gitignore":    "!keep.log\n",
		"sub/a.log":         "", "sub/keep.log": "", "sub/top-only": "", "sub/x/anchored": "", "sub/x/top-only": "", "sub/a.info": "", "sub/plain": "",
	})
	var want []string
	for _, p := range strings.Split(string(gitignoreGit(t, filepath.Join(repo, "sub"), "ls-files", "--others", "--exclude-standard", "-z")), "\x00") {
		if p != "" {
			want = append(want, p)
		}
	}
	slices.Sort(want)
	dst := filepath.Join(t.TempDir(), "dst")
	if code, _, stderr := gitignoreRun("--no-cache", "-q", "--gitignore", filepath.Join(repo, "sub"), dst); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := gitignoreFiles(t, dst, ""); !slices.Equal(got, want) {
		t.Errorf("copied %q, git lists %q", got, want)
	}
	if len(want) != 4 { // .gitignore, keep.log, x/top-only, plain
		t.Errorf("git lists %q: the tree no longer tests what it was made for", want)
	}
}

// TestGitignoreDeleteKeepsIgnored: --delete with --gitignore removes what
// the source lacks but leaves what git ignores, as it leaves what
// --exclude leaves out, and --include .git/ brings the repository back.
func TestGitignoreDeleteKeepsIgnored(t *testing.T) {
	gitignoreSetup(t)
	src := filepath.Join(t.TempDir(), "src")
	gitignoreGit(t, t.TempDir(), "init", "-q", src)
	gitignoreWrite(t, src, map[string]string{".gitignore": "*.log\nbuild/\n", "a.txt": "a", "sub/.gitignore": "*.o\n", "sub/b.txt": "b"})
	dst := filepath.Join(t.TempDir(), "dst")
	if code, _, stderr := gitignoreRun("--no-cache", "-q", "--gitignore", src, dst); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	gitignoreWrite(t, dst, map[string]string{"old.log": "kept", "build/out": "kept", "sub/x.o": "kept", "extra.txt": "removed", "sub/extra": "removed", "gone/x.txt": "removed", "gone/y.log": "kept"})
	if code, _, stderr := gitignoreRun("--no-cache", "-q", "--gitignore", "--delete", src, dst); code != exitOK {
		t.Fatalf("--delete: exit %d: %s", code, stderr)
	}
	want := []string{".gitignore", "a.txt", "build/out", "gone/y.log", "old.log", "sub/.gitignore", "sub/b.txt", "sub/x.o"}
	if got := gitignoreFiles(t, dst, ""); !slices.Equal(got, want) {
		t.Errorf("after --gitignore --delete DEST holds\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
	if code, _, stderr := gitignoreRun("--no-cache", "-q", "--gitignore", "--include", ".git/", src, dst); code != exitOK {
		t.Fatalf("--include .git/: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dst, ".git", "HEAD")); err != nil {
		t.Errorf("--include .git/ did not copy the repository: %v", err)
	}
}

// TestGitignoreVerify: verify --gitignore compares what a --gitignore
// copy copies: ignored paths are neither compared nor missed, on either
// side; a difference in a path git keeps is still found.
func TestGitignoreVerify(t *testing.T) {
	gitignoreSetup(t)
	src := filepath.Join(t.TempDir(), "src")
	gitignoreGit(t, t.TempDir(), "init", "-q", src)
	gitignoreWrite(t, src, map[string]string{".gitignore": "*.log\nnode_modules/\n", "a.txt": "a", "x.log": "x", "node_modules/m/i.js": "i"})
	dst := filepath.Join(t.TempDir(), "dst")
	if code, _, stderr := gitignoreRun("--no-cache", "-q", "--gitignore", src, dst); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	gitignoreWrite(t, dst, map[string]string{"y.log": "only in DEST", "node_modules/n": "only in DEST"})
	gitignoreWrite(t, src, map[string]string{"x.log": "changed"})
	if code, stdout, stderr := gitignoreRun("verify", "--no-cache", "--gitignore", src, dst); code != exitOK {
		t.Errorf("verify --gitignore: exit %d: %s%s", code, stdout, stderr)
	}
	if code, _, _ := gitignoreRun("verify", "--no-cache", "-q", src, dst); code != exitMismatch {
		t.Errorf("verify without --gitignore: exit %d, want %d (.git, x.log and node_modules differ)", code, exitMismatch)
	}
	gitignoreWrite(t, dst, map[string]string{"a.txt": "changed"})
	if code, stdout, _ := gitignoreRun("verify", "--no-cache", "--gitignore", src, dst); code != exitMismatch || !strings.Contains(stdout, `"a.txt"`) {
		t.Errorf("verify --gitignore after a.txt changed: exit %d, %q", code, stdout)
	}
}

// TestGitignoreFilterFileOrder: --filter-file's files apply to their
// directory and below, anchored there, the deepest first; the command
// line comes before them and git's rules after.
func TestGitignoreFilterFileOrder(t *testing.T) {
	gitignoreSetup(t)
	src := filepath.Join(t.TempDir(), "src")
	gitignoreGit(t, t.TempDir(), "init", "-q", src)
	gitignoreWrite(t, src, map[string]string{
		".gitignore":           "*.tmp\n*.bak\n",
		".fastcopy-ignore":     "# the tree's own rules\n+ keep.tmp\n- *.dat\n- /top\n",
		"sub/.fastcopy-ignore": "+ wanted.dat\n- /x\n",
		"keep.tmp":             "", "sub/keep.tmp": "", "other.tmp": "", "a.dat": "", "sub/wanted.dat": "", "sub/deep/wanted.dat": "",
		"sub/other.dat": "", "top": "", "sub/top": "", "sub/x": "", "x": "", "sub/deep/x": "", "c.bak": "", "cmdline.dat": "",
		"sub/deep/.fastcopy-ignore": "- wanted.dat\n",
	})
	dst := filepath.Join(t.TempDir(), "dst")
	code, _, stderr := gitignoreRun("--no-cache", "-q", "--gitignore", "--filter-file", ".fastcopy-ignore", "--include", "cmdline.dat", "--include", "c.bak", src, dst)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := []string{".fastcopy-ignore", ".gitignore", "c.bak", "cmdline.dat", "keep.tmp", "sub/.fastcopy-ignore", "sub/deep/.fastcopy-ignore", "sub/deep/x", "sub/keep.tmp", "sub/top", "sub/wanted.dat", "x"}
	if got := gitignoreFiles(t, dst, ""); !slices.Equal(got, want) {
		t.Errorf("copied\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
	// Without --gitignore the filter files alone decide.
	dst2 := filepath.Join(t.TempDir(), "dst")
	if code, _, stderr := gitignoreRun("--no-cache", "-q", "--filter-file", ".fastcopy-ignore", src, dst2); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := gitignoreFiles(t, dst2, "")
	for _, p := range []string{".git/HEAD", "other.tmp", "c.bak"} {
		if !slices.Contains(got, p) {
			t.Errorf("--filter-file alone left out %q", p)
		}
	}
	for _, p := range []string{"a.dat", "top", "sub/x", "sub/deep/wanted.dat"} {
		if slices.Contains(got, p) {
			t.Errorf("--filter-file alone copied %q", p)
		}
	}
}

// TestGitignoreExplain: --explain-filter names the file, line and rule
// that decided, or the excluded directory on the way, and copies nothing.
func TestGitignoreExplain(t *testing.T) {
	gitignoreSetup(t)
	src := filepath.Join(t.TempDir(), "src")
	gitignoreGit(t, t.TempDir(), "init", "-q", src)
	gitignoreWrite(t, src, map[string]string{
		".gitignore": "# deps\nnode_modules/\n*.log\n", "sub/.gitignore": "!keep.log\n", ".fcignore": "- *.dat\n",
		"node_modules/m/i.js": "", "sub/keep.log": "", "sub/a.log": "", "a.txt": "", "b.dat": "", "c.dat": "",
	})
	dst := filepath.Join(t.TempDir(), "dst")
	code, stdout, stderr := gitignoreRun("--gitignore", "--filter-file", ".fcignore", "--include", "c.dat",
		"--explain-filter", "node_modules/m/i.js", "--explain-filter", "sub/keep.log", "--explain-filter", "sub/a.log",
		"--explain-filter", "a.txt", "--explain-filter", "b.dat", "--explain-filter", "c.dat", "--explain-filter", ".git", src, dst)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := `node_modules/m/i.js: left out: its directory "node_modules" is left out by .gitignore:2: node_modules/
sub/keep.log: copied by sub/.gitignore:1: !keep.log
sub/a.log: left out by .gitignore:3: *.log
a.txt: copied: no rule matches
b.dat: left out by .fcignore:1: - *.dat
c.dat: copied by --include c.dat
.git: left out by --gitignore (git leaves .git out)
`
	if stdout != want {
		t.Errorf("--explain-filter printed\n%s\nwant\n%s", stdout, want)
	}
	if _, err := os.Lstat(dst); err == nil {
		t.Errorf("--explain-filter made DEST")
	}
	code, stdout, _ = gitignoreRun("verify", "--gitignore", "--explain-filter", "sub/a.log", src, dst)
	if code != exitOK || stdout != "sub/a.log: left out by .gitignore:3: *.log\n" {
		t.Errorf("verify --explain-filter: exit %d, %q", code, stdout)
	}
}

// TestGitignoreBadFilterFile: a filter file with a malformed pattern
// fails its directory, naming the file and line (so --delete keeps what
// is there), and the other rules still apply; a --filter-file that is a
// path is refused.
func TestGitignoreBadFilterFile(t *testing.T) {
	gitignoreSetup(t)
	src := filepath.Join(t.TempDir(), "src")
	gitignoreWrite(t, src, map[string]string{"sub/.fcignore": "- [\n- *.dat\n", "sub/a.dat": "", "sub/b.txt": ""})
	dst := filepath.Join(t.TempDir(), "dst")
	gitignoreWrite(t, dst, map[string]string{"sub/extra": "kept"})
	code, _, stderr := gitignoreRun("--no-cache", "-q", "--filter-file", ".fcignore", "--delete", src, dst)
	if code != exitSomeFailed || !strings.Contains(stderr, "sub/.fcignore:1") {
		t.Errorf("exit %d, stderr %q: want %d and the file and line named", code, stderr, exitSomeFailed)
	}
	got := gitignoreFiles(t, dst, "")
	if !slices.Contains(got, "sub/extra") || slices.Contains(got, "sub/a.dat") || !slices.Contains(got, "sub/b.txt") {
		t.Errorf("DEST holds %q: want sub/extra kept, sub/a.dat left out, sub/b.txt copied", got)
	}
	if code, _, stderr := gitignoreRun("--filter-file", "sub/.fcignore", src, dst); code != exitUsage || !strings.Contains(stderr, "sub/.fcignore") {
		t.Errorf("--filter-file sub/.fcignore: exit %d, %q; want %d", code, stderr, exitUsage)
	}
}
