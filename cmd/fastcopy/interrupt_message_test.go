package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInterruptMessageNoResume: the message of an interrupted run says a
// large file's temporary is kept for the rerun only when one can be: under
// --no-resume none is, and the message says so.
func TestInterruptMessageNoResume(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	src := filepath.Join(base, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "f"), []byte("data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flag, want, not string
	}{
		{"--no-resume", "no temporary is kept", "temporary for the rerun to resume"},
		{"", "temporary for the rerun to resume", "no temporary is kept"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // interrupted before it starts
		args := []string{"--no-cache", src, filepath.Join(base, "dst"+c.flag)}
		if c.flag != "" {
			args = append([]string{c.flag}, args...)
		}
		var stdout, stderr bytes.Buffer
		code := run(ctx, args, &stdout, &stderr)
		if code != exitInterrupted {
			t.Fatalf("%v: exit %d, want %d:\n%s", args, code, exitInterrupted, stderr.String())
		}
		msg := stderr.String()
		if !strings.Contains(msg, c.want) || strings.Contains(msg, c.not) {
			t.Errorf("%v: stderr %q; want it to say %q, not %q", args, msg, c.want, c.not)
		}
	}
}
