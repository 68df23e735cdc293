package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/mhl"
	"github.com/fastcopy/fastcopy/internal/treeverify"
	"github.com/fastcopy/fastcopy/verify"
)

// diffTampered is the difference kind of a generation file that does not
// match its chain.
const diffTampered = "tampered"

// checkMHL checks dir against its ASC MHL history: the history against its
// chains first (a mismatch is the one difference reported: nothing is
// trusted to such a history), then the files, as CheckManifest checks a
// manifest, every file the history does not list and does not ignore
// reported as extra.
func checkMHL(ctx context.Context, out *output, dir string, topt treeverify.TreeOptions) (treeverify.Report, error) {
	h, err := mhl.Load(dir)
	var ce *mhl.ChainError
	switch {
	case errors.Is(err, mhl.ErrNoHistory):
		return treeverify.Report{}, &copyengine.RefusalError{Path: dir, Msg: "has no ASC MHL history (no ascmhl folder)",
			Hint: "give the folder that holds the ascmhl folder, or compare with 'fastcopy verify SOURCE DEST'"}
	case errors.As(err, &ce):
		rel := ce.Path
		if r, rerr := filepath.Rel(dir, ce.Path); rerr == nil && !strings.HasPrefix(r, "..") {
			rel = filepath.ToSlash(r)
		}
		out.printf(out.stderr, "fastcopy: error: the ASC MHL history of %q does not match its chain: %v\n", dir, ce)
		out.printf(out.stderr, "fastcopy: hint: the history was changed after it was written, so it vouches for nothing; check the files against another copy ('fastcopy verify SOURCE DEST') or a history that is intact\n")
		return treeverify.Report{Diffs: []treeverify.Diff{{Path: rel, Kind: diffTampered, Detail: ce.Msg}}}, nil
	case err != nil:
		return treeverify.Report{}, fmt.Errorf("reading the ASC MHL history of %q: %w", dir, err)
	}
	warnUnchained(out, h)
	exp, err := h.Expected()
	if err != nil {
		return treeverify.Report{}, fmt.Errorf("reading the ASC MHL history of %q: %w", dir, err)
	}
	entries := make([]verify.ManifestEntry, 0, len(exp.Files))
	topt.Unhashed = map[string]string{}
	for _, f := range exp.Files {
		if !f.HasSum {
			topt.Unhashed[f.Path] = "recorded as " + strings.Join(f.Formats, ", ") + " only; fastcopy checks xxh128"
			continue
		}
		entries = append(entries, verify.ManifestEntry{Path: f.Path, Sum: f.Sum})
	}
	topt.Unlisted = func(rel string) bool { return !exp.Ignored(rel, false) }
	return treeverify.CheckManifest(ctx, entries, dir, topt)
}

// warnUnchained names generation files no chain lists: they were not read.
func warnUnchained(out *output, h *mhl.History) {
	for _, u := range h.Unchained {
		out.printf(out.stderr, "fastcopy: warning: %q is not in its ascmhl_chain.xml (a write that stopped midway?); it was not read\n", filepath.Join(filepath.FromSlash(h.Prefix), "ascmhl", u))
	}
	for _, c := range h.Children {
		warnUnchained(out, c)
	}
}
