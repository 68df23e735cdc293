package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

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
