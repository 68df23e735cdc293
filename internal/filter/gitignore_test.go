package filter

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// gitignoreCase is a tree holding a .gitignore at its root (top) and one
// in its directory d (sub), and a path to ask about.
type gitignoreCase struct {
	top, sub string
	rel      string
	isDir    bool
	out      bool   // git ignores it (found with git check-ignore)
	by       string // "file:line" of the deciding pattern, "" for none
}

// gitignoreCases hold every rule of gitignore(5) to an example; each
// verdict is git's (TestGitignoreRules asks git again when it is there).
var gitignoreCases = []gitignoreCase{
	{top: "*.log\n", rel: "a.log", out: true, by: ".gitignore:1"},
	{top: "*.log\n", rel: "x/y/a.log", out: true, by: ".gitignore:1"},
	{top: "*.log\n!keep.log\n", rel: "keep.log", by: ".gitignore:2"},
	{top: "*.log\n!keep.log\n", rel: "x/keep.log", by: ".gitignore:2"},
	{top: "build/\n", rel: "build", isDir: true, out: true, by: ".gitignore:1"},
	{top: "build/\n", rel: "build"},
	{top: "build/\n", rel: "x/build", isDir: true, out: true, by: ".gitignore:1"},
	{top: "build/\n", rel: "build/x", out: true, by: ".gitignore:1"}, // its directory is out
	{top: "/build\n", rel: "x/build", isDir: true},
	{top: "/build\n", rel: "build", out: true, by: ".gitignore:1"},
	{top: "doc/frotz\n", rel: "doc/frotz", out: true, by: ".gitignore:1"},
	{top: "doc/frotz\n", rel: "a/doc/frotz"},
	{top: "**/foo\n", rel: "foo", out: true, by: ".gitignore:1"},
	{top: "**/foo\n", rel: "a/b/foo", out: true, by: ".gitignore:1"},
	{top: "**/foo/bar\n", rel: "a/foo/bar", out: true, by: ".gitignore:1"},
	{top: "abc/**\n", rel: "abc/x/y", out: true, by: ".gitignore:1"},
	{top: "abc/**\n", rel: "abc", isDir: true},
	{top: "a/**/b\n", rel: "a/b", out: true, by: ".gitignore:1"},
	{top: "a/**/b\n", rel: "a/x/y/b", out: true, by: ".gitignore:1"},
	{top: "a**/b\n", rel: "a/x/b", out: true, by: ".gitignore:1"}, // the literal "a" is matched apart
	{top: "a**/b\n", rel: "ab/b", out: true, by: ".gitignore:1"},
	{top: "foo**bar\n", rel: "fooxbar", out: true, by: ".gitignore:1"},
	{top: "foo**bar\n", rel: "foo/x/bar"},
	{top: "\\#x\n", rel: "#x", out: true, by: ".gitignore:1"},
	{top: "#x\n", rel: "#x"},
	{top: "\\!x\n", rel: "!x", out: true, by: ".gitignore:1"},
	{top: "x\\ \n", rel: "x ", out: true, by: ".gitignore:1"},
	{top: "x  \n", rel: "x", out: true, by: ".gitignore:1"},
	{top: "x  \n", rel: "x "},
	{top: "x\t\n", rel: "x\t", out: true, by: ".gitignore:1"}, // only spaces are trimmed
	{top: "x\\*\n", rel: "x*", out: true, by: ".gitignore:1"},
	{top: "x\\*\n", rel: "xy"},
	{top: "[ab]c\n", rel: "bc", out: true, by: ".gitignore:1"},
	{top: "[!ab]c\n", rel: "bc"},
	{top: "[^ab]c\n", rel: "dc", out: true, by: ".gitignore:1"},
	{top: "[[:digit:]]x\n", rel: "5x", out: true, by: ".gitignore:1"},
	{top: "[[:alpha:]]x\n", rel: "5x"},
	{top: "[[:nope:]]x\n", rel: "5x"},
	{top: "[]]x\n", rel: "]x", out: true, by: ".gitignore:1"},
	{top: "[a-c]x\n", rel: "bx", out: true, by: ".gitignore:1"},
	{top: "a?c\n", rel: "abc", out: true, by: ".gitignore:1"},
	{top: "a/?/c\n", rel: "a/b/c", out: true, by: ".gitignore:1"},
	{top: "a?c\n", rel: "a/c"},
	{top: "a/*\n", rel: "a/b/c", out: true, by: ".gitignore:1"},
	{top: "a/*\n", rel: "a/b", out: true, by: ".gitignore:1"},
	{top: "*\n!*/\n!*.c\n", rel: "x/y.c", by: ".gitignore:3"},
	{top: "*\n!*/\n!*.c\n", rel: "x/y.h", out: true, by: ".gitignore:1"},
	{top: "x\r\n", rel: "x", out: true, by: ".gitignore:1"},
	{top: "\xef\xbb\xbfx\n", rel: "x", out: true, by: ".gitignore:1"},
	{top: "a/\n", rel: "a"},
	{top: "a//\n", rel: "a", isDir: true},
	{top: "*.o\n", rel: "dir.o", isDir: true, out: true, by: ".gitignore:1"},
	{top: "/a/b/\n", rel: "a/b", isDir: true, out: true, by: ".gitignore:1"},
	{top: "/a/b/\n", rel: "a/b"},
	{top: "f[o\n", rel: "f[o"},
	{top: "foo\\\n", rel: "foo\\"},
	{top: "!\n", rel: "x"},
	{top: "*/b\n", rel: "a/b", out: true, by: ".gitignore:1"},
	{top: "*/b\n", rel: "x/a/b"},
	{top: "a/b*\n", rel: "a/bc", out: true, by: ".gitignore:1"},
	{top: "a/**\n", rel: "a"},
	{top: "**\n", rel: "x/y", out: true, by: ".gitignore:1"},
	{top: "**/\n", rel: "x", isDir: true, out: true, by: ".gitignore:1"},
	{top: "a\\/b\n", rel: "a/b", out: true, by: ".gitignore:1"},
	{top: "\\a\n", rel: "a", out: true, by: ".gitignore:1"},
	{top: "*\\\\\n", rel: "x\\", out: true, by: ".gitignore:1"},
	{top: "no-final-newline", rel: "no-final-newline", out: true, by: ".gitignore:1"},
	// A deeper file's patterns come first, and anchor at its directory.
	{top: "*.tmp\n", sub: "!keep.tmp\n", rel: "d/keep.tmp", by: "d/.gitignore:1"},
	{top: "!keep.tmp\n", sub: "*.tmp\n", rel: "d/keep.tmp", out: true, by: "d/.gitignore:1"},
	{top: "*.tmp\n", sub: "!keep.tmp\n", rel: "keep.tmp", out: true, by: ".gitignore:1"},
	{sub: "/x\n", rel: "d/x", out: true, by: "d/.gitignore:1"},
	{sub: "/x\n", rel: "x"},
	{sub: "/x\n", rel: "d/e/x"},
	{sub: "e/x\n", rel: "d/e/x", out: true, by: "d/.gitignore:1"},
	{sub: "x\n", rel: "d/e/f/x", out: true, by: "d/.gitignore:1"},
	{sub: "**/x\n", rel: "d/e/x", out: true, by: "d/.gitignore:1"},
	{sub: "d/x\n", rel: "d/x"},
	// No re-inclusion inside an excluded directory.
	{top: "d/\n!d/keep\n", rel: "d/keep", out: true, by: ".gitignore:1"},
	{top: "d/\n", sub: "!keep\n", rel: "d/keep", out: true, by: ".gitignore:1"},
	{top: "d/*\n!d/keep\n", rel: "d/keep", by: ".gitignore:2"},
}

// gitignoreWrite lays out c in dir (a repository's working tree).
func gitignoreWrite(t testing.TB, dir string, c gitignoreCase) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{".gitignore": c.top, "d/.gitignore": c.sub} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if c.isDir {
		if err := os.MkdirAll(filepath.Join(dir, c.rel), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// gitignoreEnv is an environment in which git reads no configuration of
// this machine's: HOME and XDG_CONFIG_HOME are home.
func gitignoreEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") && !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM=1")
}

// gitignoreRepo makes a repository in a new directory (nothing added) with
// git's environment env; it skips the test when git is not installed.
func gitignoreRepo(t testing.TB, dir string, env []string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the comparison with git check-ignore needs it")
	}
	cmd := exec.Command("git", "init", "-q", dir)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
}

// gitignoreCheck asks git check-ignore about rel in the working tree dir:
// whether it is ignored, and by which file and line.
func gitignoreCheck(t testing.TB, dir, rel string, env []string) (out bool, by string) {
	t.Helper()
	cmd := exec.Command("git", "check-ignore", "--no-index", "-v", "-n", "-z", "--stdin")
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader(rel + "\x00")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("git check-ignore %q: %v\n%s", rel, err, stderr.Bytes())
		}
	}
	f := strings.Split(string(b), "\x00")
	if len(f) < 4 {
		t.Fatalf("git check-ignore %q: unexpected output %q", rel, b)
	}
	if f[0] == "" {
		return false, ""
	}
	return !strings.HasPrefix(f[2], "!"), f[0] + ":" + f[1]
}

// gitignoreOurs is the Tree's verdict on rel in dir, as Explain gives it.
func gitignoreOurs(dir, rel string, isDir bool) (out bool, by string) {
	r, err := Build(Config{GitIgnore: true})
	if err != nil {
		panic(err)
	}
	v, _ := r.Tree(dir).Explain(rel, isDir)
	by = v.By
	if i := strings.Index(by, ": "); i >= 0 {
		by = by[:i]
	}
	return v.Excluded, by
}

// TestGitignoreRules holds the matcher to git on every rule of
// gitignore(5): the verdicts written above, and git check-ignore's on the
// same trees when git is installed.
func TestGitignoreRules(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	_, gitErr := exec.LookPath("git")
	if gitErr != nil {
		t.Log("git is not installed: checking the recorded verdicts only")
	}
	env := gitignoreEnv(home)
	for i, c := range gitignoreCases {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			dir := t.TempDir()
			if gitErr == nil {
				gitignoreRepo(t, dir, env)
			}
			gitignoreWrite(t, dir, c)
			out, by := gitignoreOurs(dir, c.rel, c.isDir)
			if out != c.out || by != c.by {
				t.Errorf("top %q sub %q: %q (dir %v): ignored %v by %q, want %v by %q", c.top, c.sub, c.rel, c.isDir, out, by, c.out, c.by)
			}
			if gitErr == nil {
				gout, gby := gitignoreCheck(t, dir, c.rel, env)
				if gout != c.out || gby != c.by {
					t.Errorf("top %q sub %q: %q: git says ignored %v by %q; the case says %v by %q", c.top, c.sub, c.rel, gout, gby, c.out, c.by)
				}
			}
		})
	}
}

// TestGitignoreRepoFiles holds .git/info/exclude and core.excludesFile
// to git: info/exclude comes after every .gitignore and before
// core.excludesFile, and the .gitignore files above a source inside a
// repository apply to it.
func TestGitignoreRepoFiles(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	env := gitignoreEnv(home)
	dir := t.TempDir()
	gitignoreRepo(t, dir, env)
	write := func(name, s string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	global := filepath.Join(home, "global-ignore")
	if err := os.WriteFile(global, []byte("*.g\n*.both\n!*.info\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "config", "core.excludesFile", "~/global-ignore")
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git config: %v\n%s", err, out)
	}
	write(".git/info/exclude", "# comment\n*.info\n!*.both\n")
	write(".gitignore", "*.top\n!x.info\n")
	write("src/.gitignore", "/anch\n")
	for _, rel := range []string{"a.g", "a.both", "a.info", "x.info", "a.top", "src/a.top", "src/a.g", "src/anch", "src/x/anch", "plain"} {
		gout, gby := gitignoreCheck(t, dir, rel, env)
		gby = strings.TrimPrefix(gby, dir+"/")
		out, by := gitignoreOurs(dir, rel, false)
		by = strings.TrimPrefix(by, dir+"/")
		if strings.HasPrefix(gby, "~/") || strings.HasPrefix(gby, home) {
			gby = "global-ignore" + gby[strings.LastIndexByte(gby, ':'):]
		}
		if strings.HasPrefix(by, home) {
			by = "global-ignore" + by[strings.LastIndexByte(by, ':'):]
		}
		if out != gout || by != gby {
			t.Errorf("%q: ignored %v by %q, git says %v by %q", rel, out, by, gout, gby)
		}
	}
	// A source inside the repository: the patterns of the .gitignore
	// files above it, anchored where they are, apply to its paths.
	for _, rel := range []string{"a.top", "anch", "x/anch", "a.info"} {
		gout, _ := gitignoreCheck(t, dir, "src/"+rel, env)
		out, _ := gitignoreOurs(filepath.Join(dir, "src"), rel, false)
		if out != gout {
			t.Errorf("source src, %q: ignored %v, git says %v", rel, out, gout)
		}
	}
}

// gitignoreFuzzDir is the working tree one fuzzing process reuses.
var gitignoreFuzzDir string

// FuzzGitignore compares the matcher with git check-ignore on random
// .gitignore files (at the root and in d/) and paths, deciding file and
// line included, when git is installed; without git it checks that no
// input panics and that Explain and Excluded agree.
func FuzzGitignore(f *testing.F) {
	for _, c := range gitignoreCases {
		f.Add(c.top, c.sub, c.rel, c.isDir)
	}
	home := f.TempDir()
	f.Setenv("HOME", home)
	f.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	f.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	env := gitignoreEnv(home)
	_, gitErr := exec.LookPath("git")
	dir := filepath.Join(f.TempDir(), "w")
	if gitErr == nil {
		gitignoreRepo(f, dir, env)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		f.Fatal(err)
	}
	gitignoreFuzzDir = dir
	f.Fuzz(func(t *testing.T, top, sub, rel string, isDir bool) {
		parts := strings.Split(rel, "/")
		for _, p := range parts {
			if p == "" || p == "." || p == ".." || p == GitDir || strings.ContainsRune(p, 0) || len(p) > 255 {
				return // not a name a file system holds (255 bytes is NAME_MAX)
			}
		}
		if strings.HasPrefix(rel, ":") || (!isDir && rel == "d") || rel == "d/.gitignore" && isDir || rel == ".gitignore" && isDir {
			return // a pathspec's magic; a file named as the tree's directories
		}
		if len(top)+len(sub) > 4096 || len(rel) > 512 {
			return
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.Name() != GitDir {
				if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
					t.Fatal(err)
				}
			}
		}
		c := gitignoreCase{top: top, sub: sub, rel: rel, isDir: isDir}
		gitignoreWrite(t, dir, c)
		out, by := gitignoreOurs(dir, rel, isDir)
		r, _ := Build(Config{GitIgnore: true})
		tr := r.Tree(dir)
		v, at := tr.Explain(rel, isDir)
		if at == rel && tr.Excluded(rel, isDir) != v.Excluded {
			t.Fatalf("Explain and Excluded disagree on %q", rel)
		}
		if gitErr != nil {
			return
		}
		gout, gby := gitignoreCheck(t, dir, rel, env)
		if out != gout || by != gby {
			t.Fatalf("top %q sub %q: %q (dir %v): ignored %v by %q, git says %v by %q", top, sub, rel, isDir, out, by, gout, gby)
		}
	})
}
