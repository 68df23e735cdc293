package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/digest"
	"github.com/fastcopy/fastcopy/internal/mhl"
	"github.com/fastcopy/fastcopy/internal/treeverify"
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
	entries, unhashed, err := mhlDigestEntries(dir, exp.Files)
	if err != nil {
		return treeverify.Report{}, err
	}
	topt.Unhashed = unhashed
	topt.Unlisted = func(rel string) bool { return !exp.Ignored(rel, false) }
	return treeverify.CheckDigests(ctx, entries, dir, topt)
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

// mhlDigestEntries picks, for each file a history records, the strongest
// of its recorded formats that fastcopy computes (internal/digest's Rank),
// which alone is checked. A file recorded in no such format is returned in
// unhashed (reported "unchecked"); when that is every file, the history
// cannot be checked at all: an error names the formats it uses.
func mhlDigestEntries(dir string, files []mhl.ExpectedFile) (entries []treeverify.DigestEntry, unhashed map[string]string, err error) {
	unhashed = map[string]string{}
	var unknown []string
	for _, f := range files {
		var names []string
		for n := range f.Digests {
			names = append(names, n)
		}
		sort.Strings(names)
		best, ok := digest.Strongest(names)
		if !ok {
			why := "recorded without a hash"
			if len(f.Formats) > 0 {
				why = "recorded as " + strings.Join(f.Formats, ", ") + " only; fastcopy checks " + strings.Join(digest.Names(), ", ")
			}
			unhashed[f.Path] = why
			for _, n := range f.Formats {
				if !slices.Contains(unknown, n) {
					unknown = append(unknown, n)
				}
			}
			continue
		}
		entries = append(entries, treeverify.DigestEntry{Path: f.Path, Digests: []treeverify.Digest{{Format: best, Value: f.Digests[best.Name]}}})
	}
	if len(entries) == 0 && len(unhashed) > 0 {
		what := "no hash at all"
		if len(unknown) > 0 {
			what = strings.Join(unknown, ", ") + " only"
		}
		return nil, nil, &copyengine.RefusalError{Path: dir, Msg: "its ASC MHL history records its files in " + what + ", so fastcopy can check none of them (it checks " + strings.Join(digest.Names(), ", ") + ")",
			Hint: "check the files with the tool that wrote the history, or against another copy ('fastcopy verify SOURCE DEST')"}
	}
	return entries, unhashed, nil
}
