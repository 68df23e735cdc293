package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cheggaaa/pb/v3"
	"golang.org/x/term"

	"github.com/fastcopy/fastcopy/copyengine"
)

// output renders what the engine reports: diagnostics to stderr, results
// (the summary or --json) to stdout.
type output struct {
	stdout, stderr io.Writer
	verbose, quiet bool
	json           bool
	noResume       bool     // --no-resume: no temporary is kept when interrupted
	args           []string // the command line as given, flags included (--log's run-start)
	mu             sync.Mutex
	bar            *pb.ProgressBar
}

func (o *output) printf(w io.Writer, format string, a ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.bar != nil {
		// Clear the bar's line so the message does not run into it.
		fmt.Fprint(w, "\r\033[K")
	}
	if typedPaths {
		fmt.Fprint(w, typedQuotes(fmt.Sprintf(format, a...)))
		return
	}
	fmt.Fprintf(w, format, a...)
}

func (o *output) warn(format string, a ...any) {
	o.printf(o.stderr, "fastcopy: warning: "+format+"\n", a...)
}

func (o *output) info(format string, a ...any) {
	if !o.quiet {
		o.printf(o.stderr, "fastcopy: "+format+"\n", a...)
	}
}

// event prints a failure as it happens, and with -v each entry acted on.
func (o *output) event(ev copyengine.Event) {
	switch {
	case ev.Action == copyengine.ActFail:
		o.printf(o.stderr, "fastcopy: error: %q: %v\n", ev.Path, copyengine.ErrText(ev.Err))
	case o.verbose && ev.Action == copyengine.ActResume:
		o.printf(o.stderr, "%-11s %s (resumed at %s)\n", ev.Action, ev.Path, copyengine.HumanBytes(ev.Resumed))
	case ev.Action == copyengine.ActRetry && o.verbose:
		o.printf(o.stderr, "%-11s %s: %v\n", ev.Action, ev.Path, copyengine.ErrText(ev.Err))
	case o.verbose:
		o.printf(o.stderr, "%-11s %s\n", ev.Action, ev.Path)
	}
}

func (o *output) reportError(err error, code int) {
	var refusal *copyengine.RefusalError
	switch {
	case errors.As(err, new(reportedError)):
		// Printed already, with the destination it happened in.
	case errors.As(err, &refusal):
		o.printf(o.stderr, "fastcopy: error: %s\n", refusal.Error())
		if refusal.Hint != "" {
			o.printf(o.stderr, "fastcopy: hint: %s\n", refusal.Hint)
		}
	case code == exitUsage:
		o.printf(o.stderr, "fastcopy: error: %v\n", err)
	case code == exitInterrupted && o.noResume:
		o.printf(o.stderr, "fastcopy: interrupted; rerun to finish (--no-resume: no temporary is kept, a large file is copied again from its first byte)\n")
	case code == exitInterrupted:
		o.printf(o.stderr, "fastcopy: interrupted; rerun to finish (a large file being copied keeps its hidden temporary for the rerun to resume)\n")
	case code == exitLocked:
		o.printf(o.stderr, "fastcopy: error: %v\n", err)
		o.printf(o.stderr, "fastcopy: hint: wait for the other run to finish and rerun, or rerun with --no-cache (or another --cache) if only the hash cache is busy\n")
	case code == exitNotKept:
		o.printf(o.stderr, "fastcopy: error: %v\n", err)
		o.printf(o.stderr, "fastcopy: hint: the files are in place and verified; copy to a filesystem that keeps what the warnings name, or run without --strict to accept it\n")
	case errors.As(err, new(*copyengine.DriveGoneError)):
		o.printf(o.stderr, "fastcopy: error: %v\n", err)
		o.printf(o.stderr, "fastcopy: hint: reconnect or remount the drive and rerun: what is in place is checked and skipped, the rest copied\n")
	case errors.As(err, new(logError)):
		o.printf(o.stderr, "fastcopy: error: %v\n", err)
		o.printf(o.stderr, "fastcopy: hint: the copies are as the summary says, but the log lacks lines; make room where it lies and rerun\n")
	case errors.As(err, new(*copyengine.DestFullError)):
		o.printf(o.stderr, "fastcopy: error: %v\n", err)
	case code == exitRotten:
		o.printf(o.stderr, "fastcopy: error: %v\n", err)
		o.printf(o.stderr, "fastcopy: hint: each rotten file above says what became of it: those copied again from the source are verified; those not repaired stay marked rotten in the hash cache and are named by every run that meets them until they are copied again or removed; check the destination device (SMART, cables) and run with --scrub again: files not read yet may have rotted too\n")
	case code == exitMaxDelete:
		o.printf(o.stderr, "fastcopy: error: %v\n", err)
		o.printf(o.stderr, "fastcopy: hint: run again with -n -v to list what would be removed; raise --max-delete if that is right\n")
	case errors.As(err, new(*copyengine.MHLError)):
		o.printf(o.stderr, "fastcopy: error: %v\n", err)
		o.printf(o.stderr, "fastcopy: hint: the copies are in place as the summary says; fix the cause and rerun with --mhl: what is in place is checked, not copied again, and the generation is written\n")
	case errors.As(err, new(*copyengine.BagError)):
		o.printf(o.stderr, "fastcopy: error: %v\n", err)
		o.printf(o.stderr, "fastcopy: hint: the copies are in place under DEST/data as the summary says; fix the cause and rerun with --bag: what is in place is checked, not copied again, and the bag's tag files are written\n")
	case code == exitSomeFailed || code == exitMismatch:
		// Each failure was printed as it happened; the summary counts them.
	default:
		o.printf(o.stderr, "fastcopy: error: %v\n", err)
	}
}

type jsonReport struct {
	copyengine.Summary
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	Status         string  `json:"status"`
	ExitCode       int     `json:"exit_code"`
}

func (o *output) summary(s copyengine.Summary, err error) {
	if o.json {
		o.writeJSON(newJSONReport(s, err))
		return
	}
	if line := o.summaryLine(s, err); line != "" {
		o.printf(o.stdout, "%s\n", line)
	}
}

// writeJSON writes v to stdout, indented: --json's one document.
func (o *output) writeJSON(v any) {
	enc := json.NewEncoder(o.stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func newJSONReport(s copyengine.Summary, err error) jsonReport {
	if s.Failures == nil {
		s.Failures = []copyengine.Failure{}
	}
	status := "ok"
	if err != nil {
		status = err.Error()
	}
	return jsonReport{Summary: s, ElapsedSeconds: s.Elapsed.Seconds(), Status: status, ExitCode: exitCode(err)}
}

// summaryLine says what a run did in one line, or "" when there is
// nothing to say (-q, a refusal).
func (o *output) summaryLine(s copyengine.Summary, err error) string {
	var refusal *copyengine.RefusalError
	if o.quiet || errors.As(err, &refusal) || errors.As(err, new(usageError)) {
		return ""
	}
	if s.Jobs == 0 && s.Copied+s.Skipped+s.Failed == 0 {
		return "" // refused before starting
	}
	var b strings.Builder
	writeCounts(&b, s)
	o.writeNotes(&b, s)
	o.mirrorSummary(&b, s)
	return b.String()
}

// writeCounts writes the summary line's first part: what was copied,
// skipped, failed, shared and linked, and how long it took.
func writeCounts(b *strings.Builder, s copyengine.Summary) {
	verb := "copied"
	if s.DryRun {
		verb = "would copy"
	}
	fmt.Fprintf(b, "%s %d files (%s", verb, s.Copied, copyengine.HumanBytes(s.Bytes))
	if s.Cloned > 0 {
		fmt.Fprintf(b, ", %d cloned", s.Cloned)
	}
	fmt.Fprintf(b, "), skipped %d unchanged, failed %d", s.Skipped, s.Failed)
	if s.Deduped > 0 {
		how := "cloned"
		switch {
		case s.DedupLinked > 0 && s.DedupCloned > 0:
			how = fmt.Sprintf("%d cloned, %d hard-linked", s.DedupCloned, s.DedupLinked)
		case s.DedupLinked > 0:
			how = "hard-linked"
		}
		fmt.Fprintf(b, ", %d duplicates %s (%s not written)", s.Deduped, how, copyengine.HumanBytes(s.BytesNotWritten))
	}
	if s.Linked > 0 {
		fmt.Fprintf(b, ", %d hard links", s.Linked)
	}
	if s.LinkDest > 0 {
		fmt.Fprintf(b, ", %d linked to --link-dest", s.LinkDest)
	}
	if s.LinkCopies > 0 {
		fmt.Fprintf(b, ", %d hard links copied as separate files", s.LinkCopies)
	}
	if s.Resumed > 0 {
		fmt.Fprintf(b, ", %d resumed (%s kept from an interrupted run)", s.Resumed, copyengine.HumanBytes(s.BytesResumed))
	}
	if s.Symlinks+s.Specials > 0 {
		fmt.Fprintf(b, ", %d symlinks/special", s.Symlinks+s.Specials)
	}
	fmt.Fprintf(b, " in %s", s.Elapsed.Round(time.Millisecond))
	if secs := s.Elapsed.Seconds(); secs > 0 && s.Bytes > 0 {
		fmt.Fprintf(b, " (%s/s)", copyengine.HumanBytes(int64(float64(s.Bytes)/secs)))
	}
}

// writeNotes writes the summary line's notes after the counts: how the
// copies were verified, the cache, the limits, and the records written.
func (o *output) writeNotes(b *strings.Builder, s copyengine.Summary) {
	switch {
	case s.DryRun || s.Copied == 0:
	case s.Verify == copyengine.VerifyOff:
		b.WriteString("; not verified")
	default:
		fmt.Fprintf(b, "; verified %d from %s", s.Verified, s.Verify)
	}
	if s.Scrubbed > 0 {
		fmt.Fprintf(b, "; scrubbed %d (%s read from the device), %d rotten", s.Scrubbed, copyengine.HumanBytes(s.BytesScrubbed), len(s.Rotten))
	}
	if s.CacheHits > 0 || s.BytesHashed > 0 {
		fmt.Fprintf(b, "; %d digests from cache, %s hashed", s.CacheHits, copyengine.HumanBytes(s.BytesHashed))
	}
	if s.BwLimit > 0 {
		fmt.Fprintf(b, "; at most %s/s (--bwlimit)", copyengine.HumanBytes(s.BwLimit))
	}
	if s.DedupNote != "" {
		fmt.Fprintf(b, "; note: %s", s.DedupNote)
	}
	if s.VerifyNote != "" {
		fmt.Fprintf(b, "; note: %s", s.VerifyNote)
	}
	if s.StagingNote != "" && o.verbose {
		fmt.Fprintf(b, "; note: %s", s.StagingNote)
	}
	if s.Mismatches > 0 {
		fmt.Fprintf(b, "; %d MISMATCHED", s.Mismatches)
	}
	if s.BytesShared > 0 {
		fmt.Fprintf(b, "; %s of source taken from another destination's read", copyengine.HumanBytes(s.BytesShared))
	}
	switch {
	case s.MHL != "":
		fmt.Fprintf(b, "; ASC MHL generation %d (%d files) written: %s", s.MHLSeq, s.MHLFiles, s.MHL)
	case s.MHLError != "":
		fmt.Fprintf(b, "; ASC MHL history NOT written: %s", s.MHLError)
	}
	switch {
	case s.Bag != "":
		fmt.Fprintf(b, "; bag written: %s (Payload-Oxum %s)", s.Bag, s.BagOxum)
	case s.BagError != "":
		fmt.Fprintf(b, "; bag NOT written: %s", s.BagError)
	}
}

// progress draws a pb/v3 bar on stderr from the engine's counters.
type progress struct {
	out  *output
	done chan struct{}
	wg   sync.WaitGroup
}

// startProgress draws one bar for the run's stats; with several
// destinations (labels names them) the bar counts them together and
// its text gives each one's share done.
func (o *output) startProgress(sts []*copyengine.Stats, labels []string, force, never bool) *progress {
	p := &progress{out: o, done: make(chan struct{})}
	isTerm := false
	if f, ok := o.stderr.(*os.File); ok {
		isTerm = term.IsTerminal(int(f.Fd()))
	}
	if never || o.quiet || o.verbose || !(isTerm || force) {
		return p
	}
	tmpl := `{{counters . }} {{bar . }} {{percent . }} {{speed . "%s/s" "? B/s"}} {{string . "files"}} {{rtime . "ETA %s"}}`
	bar := pb.New64(0).SetTemplateString(tmpl).Set(pb.Bytes, true).SetWriter(o.stderr).SetMaxWidth(120)
	if !isTerm {
		bar.Set(pb.Terminal, false)
	}
	bar.SetRefreshRate(200 * time.Millisecond)
	o.mu.Lock()
	o.bar = bar
	o.mu.Unlock()
	bar.Start()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			var total, done, filesDone, filesTotal int64
			scanned := true
			var each []string
			for i, st := range sts {
				t, d := st.BytesTotal.Load(), st.BytesDone.Load()
				total, done = total+t, done+d
				filesDone += st.FilesDone.Load()
				filesTotal += st.FilesTotal.Load()
				scanned = scanned && st.ScanDone.Load()
				if len(sts) > 1 {
					pct := 100
					if t > 0 {
						pct = int(d * 100 / t)
					}
					each = append(each, fmt.Sprintf("%s %d%%", labels[i], pct))
				}
			}
			files := fmt.Sprintf("%d/%d files", filesDone, filesTotal)
			if !scanned {
				files += "+"
			}
			if len(each) > 0 {
				files += " (" + strings.Join(each, ", ") + ")"
			}
			bar.SetTotal(total)
			bar.SetCurrent(done)
			bar.Set("files", files)
			select {
			case <-p.done:
				bar.Finish()
				return
			case <-t.C:
			}
		}
	}()
	return p
}

func (p *progress) stop() {
	close(p.done)
	p.wg.Wait()
	p.out.mu.Lock()
	p.out.bar = nil
	p.out.mu.Unlock()
}
