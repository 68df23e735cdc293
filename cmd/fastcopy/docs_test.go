package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

//go:generate go test -run TestCLIDocsUpToDate -update .

var update = flag.Bool("update", false, "rewrite docs/cli from the command tree")

// TestCLIDocsUpToDate keeps docs/cli/*.md equal to what the cobra command
// tree generates, so the reference cannot drift from --help.
func TestCLIDocsUpToDate(t *testing.T) {
	t.Parallel()
	want := filepath.Join("..", "..", "docs", "cli")
	got := t.TempDir()
	root := newRootCommand(&output{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}})
	root.DisableAutoGenTag = true
	if err := doc.GenMarkdownTree(root, got); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(got, "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs generated: %v", err)
	}
	if *update {
		if err := os.MkdirAll(want, 0o755); err != nil {
			t.Fatal(err)
		}
		old, _ := filepath.Glob(filepath.Join(want, "*.md"))
		for _, f := range old {
			os.Remove(f)
		}
	}
	for _, f := range files {
		gen, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(want, filepath.Base(f))
		if *update {
			if err := os.WriteFile(dst, gen, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		have, err := os.ReadFile(dst)
		if err != nil || !bytes.Equal(have, gen) {
			t.Errorf("%s is out of date with the command tree; run: go generate ./cmd/fastcopy", dst)
		}
	}
	if have, _ := filepath.Glob(filepath.Join(want, "*.md")); len(have) != len(files) {
		t.Errorf("docs/cli has %d pages, the command tree %d; run: go generate ./cmd/fastcopy", len(have), len(files))
	}
}

// flagName finds the flags in a usage listing ("  -j, --jobs int  ...").
var flagName = regexp.MustCompile(`(?m)^ +(?:-\w, )?--([\w-]+)`)

// TestCLIReferenceComplete keeps docs/cli.md, the reference written by
// hand, true to the command tree: it names every command and every flag,
// and every exit code of the copy's help.
func TestCLIReferenceComplete(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatalf("the reference exitcodes.go points at: %v", err)
	}
	ref := string(b)
	flags := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		if !strings.Contains(ref, "`"+c.CommandPath()) {
			t.Errorf("docs/cli.md does not name the command %q", c.CommandPath())
		}
		for _, m := range flagName.FindAllStringSubmatch(c.LocalFlags().FlagUsages(), -1) {
			flags++
			if !strings.Contains(ref, "`--"+m[1]) && !strings.Contains(ref, ", --"+m[1]) {
				t.Errorf("docs/cli.md does not list %s --%s", c.CommandPath(), m[1])
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCommand(&output{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}))
	if flags < 30 {
		t.Fatalf("found only %d flags in the command tree's usage", flags)
	}
	for _, m := range regexp.MustCompile(`(?m)^  (\d+) `).FindAllStringSubmatch(exitHelp, -1) {
		if !strings.Contains(ref, "\n| "+m[1]+" |") {
			t.Errorf("docs/cli.md has no row for exit code %s", m[1])
		}
	}
}
