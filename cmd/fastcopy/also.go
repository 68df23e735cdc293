package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fastcopy/fastcopy/copyengine"
)

// runAlso copies to DEST and to every --also destination from one read of
// the source (copyengine.RunAll): each destination gets a run of its own,
// reported on its own; the exit status is the worst of theirs.
func runAlso(ctx context.Context, out *output, o *copyOptions, base copyengine.Options) error {
	if err := refuseWithAlso(o); err != nil {
		return err
	}
	dests := append([]string{base.Dest}, o.also...)
	opts := make([]copyengine.Options, len(dests))
	stats := make([]*copyengine.Stats, len(dests))
	for i, d := range dests {
		eo := base
		eo.Dest = d
		eo.Stats = &copyengine.Stats{}
		if o.manifest != "" {
			eo.Manifest = strings.ReplaceAll(o.manifest, "{n}", strconv.Itoa(i+1))
		}
		label := d
		eo.OnEvent = func(ev copyengine.Event) {
			ev.Path = filepath.Join(label, ev.Path) // which destination it happened in
			out.event(ev)
		}
		// The engine's own checks (RunAll makes them again) before the
		// cache is opened, as for one destination; each destination
		// chooses its own jobs (a FUSE one takes fewer).
		if err := eo.Check(); err != nil {
			return out.refusedAll(dests, copyengine.Summary{}, err)
		}
		if o.verbose {
			out.info("%s: jobs: %d (%s)", d, eo.Jobs, eo.JobsReason)
			out.info("%s: read order: %s (%s)", d, eo.ReadOrder, eo.ReadOrderReason)
		}
		opts[i], stats[i] = withFaults(eo), eo.Stats
	}
	hc, err := o.cache.open(out, o.dryRun)
	if err != nil {
		return out.refusedAll(dests, copyengine.Summary{Verify: base.Verify}, err)
	}
	for i := range opts {
		opts[i].Cache = hc
	}
	bar := out.startProgress(stats, dests, o.progress, o.noProgress)
	res, err := copyengine.RunAll(ctx, opts)
	bar.stop()
	closeCache(out, hc)
	if err != nil {
		return out.refusedAll(dests, copyengine.Summary{}, err) // before anything was written
	}
	for i := range res {
		res[i].Err = o.afterRun(out, dests[i]+": ", res[i].Summary, res[i].Err)
	}
	return out.summaries(dests, res)
}

// refuseWithAlso refuses what --also cannot do yet, each with what to do
// instead.
func refuseWithAlso(o *copyOptions) error {
	switch {
	case o.mirror.move:
		return usageError{errors.New("--move cannot be used with --also: copy to every destination with --also first, then remove the source yourself once each is checked (fastcopy verify)")}
	case o.mirror.backupDir != "":
		return usageError{errors.New("--backup-dir cannot be used with --also: the destinations would share one backup directory; run once per destination")}
	case len(o.backup.linkDest) > 0:
		return usageError{errors.New("--link-dest cannot be used with --also: run once per destination")}
	case o.log != "":
		return usageError{errors.New("--log cannot be used with --also yet: use --json for a per-destination report, or run once per destination")}
	case o.manifest != "" && !strings.Contains(o.manifest, "{n}"):
		return usageError{fmt.Errorf("--manifest %q with --also: put {n} in the file name (1 for DEST, 2 for the first --also, ...), one manifest per destination", o.manifest)}
	}
	return nil
}

// alsoReport is --json's report of a run to several destinations.
type alsoReport struct {
	Destinations []destReport `json:"destinations"`
	Status       string       `json:"status"`
	ExitCode     int          `json:"exit_code"`
}

type destReport struct {
	Dest string `json:"dest"`
	jsonReport
}

// summaries reports each destination's outcome and returns the worst of
// them, already reported.
func (o *output) summaries(dests []string, res []copyengine.Result) error {
	var worst error
	for _, r := range res {
		err := r.Err
		if exitCode(err) == exitUsage {
			// Refused for this destination alone once the runs had
			// started (not enough space, --delete's guards): its files
			// are not there, the others' are.
			err = destRefused{err}
		}
		if exitSeverity(exitCode(err)) > exitSeverity(exitCode(worst)) {
			worst = err
		}
	}
	if o.json {
		o.alsoJSON(dests, res, worst)
	}
	for i, r := range res {
		if r.Err != nil {
			switch {
			case r.Err == copyengine.ErrSomeFailed, r.Err == copyengine.ErrMismatch, exitCode(r.Err) == exitInterrupted:
				// Each failure was printed as it happened; an
				// interrupt is reported once, below.
			default: // what stopped this destination (full, gone, refused...)
				o.printf(o.stderr, "fastcopy: error: %s: %v\n", dests[i], r.Err)
			}
		}
		if !o.json {
			if line := o.summaryLine(r.Summary, r.Err); line != "" {
				o.printf(o.stdout, "%s: %s\n", dests[i], line)
			}
		}
	}
	switch {
	case worst == nil:
		return nil
	case exitCode(worst) == exitInterrupted:
		return worst // its message and hint, once
	}
	return reportedError{worst}
}

// refusedAll reports an outcome shared by every destination before any
// was written to (a refused request, a cache held alone): with --json in
// the shape of a run to several destinations; the caller prints err once.
func (o *output) refusedAll(dests []string, s copyengine.Summary, err error) error {
	if o.json {
		res := make([]copyengine.Result, len(dests))
		for i := range res {
			res[i] = copyengine.Result{Summary: s, Err: err}
		}
		o.alsoJSON(dests, res, err)
	}
	return err
}

// alsoJSON writes --json's report of a run to several destinations: each
// one's, and the outcome of them all.
func (o *output) alsoJSON(dests []string, res []copyengine.Result, outcome error) {
	rep := alsoReport{Status: "ok", ExitCode: exitCode(outcome)}
	if outcome != nil {
		rep.Status = outcome.Error()
	}
	for i, r := range res {
		rep.Destinations = append(rep.Destinations, destReport{Dest: dests[i], jsonReport: newJSONReport(r.Summary, r.Err)})
	}
	o.writeJSON(rep)
}

// exitSeverity orders exit codes for the worst of several destinations:
// a refusal, an interrupt, a fatal error, a held lock, a mismatch, a
// failed file, a refused --delete, --strict's not kept.
func exitSeverity(code int) int {
	return slices.Index([]int{exitOK, exitNotKept, exitMaxDelete, exitRotten, exitSomeFailed, exitMismatch, exitLocked, exitFatal, exitInterrupted, exitUsage}, code)
}

// destRefused is a refusal one destination met after the run had started:
// exit 3, its files failed, the other destinations' in place.
type destRefused struct{ error }

// reportedError is an outcome whose messages were printed already; its
// exit code is its cause's.
type reportedError struct{ error }

func (r reportedError) Unwrap() error { return r.error }
