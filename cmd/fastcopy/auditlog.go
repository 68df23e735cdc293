package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/pathjson"
	"github.com/fastcopy/fastcopy/verify"
)

// auditLog is --log FILE: one JSON line per file acted on, appended to
// FILE once what the line says is durable (docs/cli.md, "Audit log").
// Lines wait in pending until the engine says, through OnFlush, that what
// it reported before a moment is on stable storage; they are then written
// and FILE is fsynced. A run that stops before a flush writes no line for
// the files it placed since the last one.
type auditLog struct {
	path     string
	f        *os.File
	writeAll bool // --no-sync, --dry-run: nothing is waited for

	mu       sync.Mutex
	pending  []logLine
	unlogged int64 // files placed whose flush was never confirmed
	err      error // the first write or fsync error
}

// timeFormat is RFC 3339 with nanoseconds, always nine digits.
const timeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// logLine is one file's line.
type logLine struct {
	at         time.Time
	Time       string `json:"time"`
	Action     string `json:"action"`
	Path       string `json:"path"`
	PathBase64 []byte `json:"path_base64,omitempty"`
	Size       *int64 `json:"size,omitempty"`
	XXH128     string `json:"xxh128,omitempty"`
	Error      string `json:"error,omitempty"`
}

// unloggedActions are the actions that get no line. Every other one says
// what became of an entry, the names -v prints: placed, found unchanged,
// failed, removed (--delete, --backup-dir, --move) or, in a dry run, what
// would be. Steps on the way (retry, resume, remove-temp, leave-temp, a --link-dest
// match copied instead), directories made (mkdir: a directory gets its
// metadata at the end) and the cache's own file get none.
var unloggedActions = map[copyengine.Action]bool{
	copyengine.ActMkdir: true, copyengine.ActCleanTmp: true, copyengine.ActLeaveTemp: true, copyengine.ActOwnCache: true,
	copyengine.ActResume: true, copyengine.ActRetry: true, copyengine.ActLinkDestCopy: true,
}

// sizedActions are the actions on a file whose length the line gives.
var sizedActions = map[copyengine.Action]bool{
	copyengine.ActCopy: true, copyengine.ActClone: true, copyengine.ActLinkCopy: true,
	copyengine.ActDedupClone: true, copyengine.ActDedupLink: true, copyengine.ActLink: true,
	copyengine.ActSkip: true, copyengine.ActMeta: true,
	copyengine.ActLinkDest: true,
}

// openAuditLog opens path for appending (made 0644 if missing). Failing
// that, the run is refused (exit 2) before it starts.
//
// A run killed while it wrote a batch's lines may have left the last line
// torn (the kernel may cut a write of several pages short on SIGKILL): that
// fragment names nothing a reader can trust, so it is cut off, with a
// warning, before this run appends.
func openAuditLog(out *output, path string, writeAll bool) (*auditLog, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		var torn int64
		if torn, err = cutTornLine(f); err == nil && torn > 0 {
			out.warn("%q: removed a torn last line (%d bytes) left by a run stopped while writing it", path, torn)
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		return nil, &copyengine.RefusalError{Path: path, Msg: "cannot open the --log file: " + copyengine.ErrText(err), Hint: "name a file you can write, outside the destination"}
	}
	return &auditLog{path: path, f: f, writeAll: writeAll}, nil
}

// cutTornLine truncates f after its last newline when it does not end
// with one, and returns how many bytes it cut.
func cutTornLine(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 {
		return 0, err
	}
	size := st.Size()
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return 0, err
	}
	if last[0] == '\n' {
		return 0, nil
	}
	keep := int64(0)
	buf := make([]byte, 64<<10)
	for end := size; end > 0 && keep == 0; {
		start := max(0, end-int64(len(buf)))
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			keep = start + int64(i) + 1
		}
		end = start
	}
	// Only a line of the log's own is cut: another file named by mistake
	// is left as it is.
	head := make([]byte, min(size-keep, int64(len(tornPrefix))))
	if _, err := f.ReadAt(head, keep); err != nil {
		return 0, err
	}
	if !bytes.HasPrefix([]byte(tornPrefix), head) {
		return 0, errors.New("its last line is not a whole line of a fastcopy log: is it one?")
	}
	if err := f.Truncate(keep); err != nil {
		return 0, err
	}
	return size - keep, f.Sync()
}

// tornPrefix is how every line of the log begins.
const tornPrefix = `{"time":"`

// start writes the run's first line: what was asked.
func (l *auditLog) start(args []string, eo *copyengine.Options, cache string) {
	v := struct {
		Time    string   `json:"time"`
		Action  string   `json:"action"`
		Version string   `json:"version"`
		Args    []string `json:"args"`
		Sources []string `json:"sources"`
		Dest    string   `json:"dest"`
		Options any      `json:"options"`
	}{
		Time: time.Now().UTC().Format(timeFormat), Action: "run-start", Version: version(),
		Args: args, Sources: eo.Sources, Dest: eo.Dest,
		Options: struct {
			Jobs     int                   `json:"jobs"`
			Verify   copyengine.VerifyMode `json:"verify"`
			Reflink  copyengine.Reflink    `json:"reflink"`
			Dedup    string                `json:"dedup"`
			Names    string                `json:"names"`
			Checksum bool                  `json:"checksum"`
			Force    bool                  `json:"force"`
			DryRun   bool                  `json:"dry_run"`
			NoSync   bool                  `json:"no_sync"`
			Excludes []string              `json:"excludes,omitempty"`
			Manifest string                `json:"manifest,omitempty"`
			Cache    string                `json:"cache"`
			BwLimit  int64                 `json:"bwlimit,omitempty"`
		}{eo.Jobs, eo.Verify, eo.Reflink, eo.Dedup.String(), eo.Names.String(), eo.Checksum, eo.Force, eo.DryRun, eo.NoSync,
			eo.Excludes, eo.Manifest, cache, eo.BwLimit},
	}
	l.write([]any{v}, false)
}

// event takes one event of the engine: a line to write once it is durable.
func (l *auditLog) event(ev copyengine.Event) {
	if unloggedActions[ev.Action.Real()] {
		return
	}
	ln := logLine{at: ev.Time, Time: ev.Time.UTC().Format(timeFormat), Action: string(ev.Action), Path: ev.Path, PathBase64: pathjson.Bytes(ev.Path)}
	switch {
	case ev.Action == copyengine.ActFail, ev.Action == copyengine.ActRotten:
		ln.Error = copyengine.ErrText(ev.Err)
	case sizedActions[ev.Action.Real()]:
		size := ev.Size
		ln.Size = &size
	}
	if ev.Sum != (verify.Sum{}) {
		ln.XXH128 = verify.Hex(ev.Sum)
	}
	l.mu.Lock()
	l.pending = append(l.pending, ln)
	l.mu.Unlock()
}

// flushed writes the lines of what was reported before at, now durable,
// and fsyncs the log (the engine's OnFlush).
func (l *auditLog) flushed(at time.Time) {
	l.mu.Lock()
	var out []any
	keep := l.pending[:0]
	for _, ln := range l.pending {
		if ln.at.Before(at) {
			out = append(out, ln)
		} else {
			keep = append(keep, ln)
		}
	}
	l.pending = keep
	l.mu.Unlock()
	l.write(out, true)
}

// finish writes what is left (all of it with --no-sync or --dry-run; else
// only failures: a file whose placement no flush confirmed gets no line),
// the run's last line, and fsyncs and closes the log. It returns the first
// error met writing it.
func (l *auditLog) finish(s copyengine.Summary, runErr error) error {
	l.mu.Lock()
	var out []any
	for _, ln := range l.pending {
		if l.writeAll || ln.Action == string(copyengine.ActFail) || ln.Action == string(copyengine.ActRotten) {
			out = append(out, ln)
		} else {
			l.unlogged++
		}
	}
	l.pending = nil
	status := "ok"
	if runErr != nil {
		status = runErr.Error()
	}
	end := struct {
		Time           string  `json:"time"`
		Action         string  `json:"action"`
		ExitCode       int     `json:"exit_code"`
		Status         string  `json:"status"`
		Copied         int64   `json:"copied"`
		Cloned         int64   `json:"cloned"`
		Deduped        int64   `json:"deduplicated"`
		Linked         int64   `json:"hardlinked"`
		Skipped        int64   `json:"skipped"`
		MetaUpdated    int64   `json:"metadata_only"`
		Failed         int64   `json:"failed"`
		Mismatches     int64   `json:"mismatches"`
		Bytes          int64   `json:"bytes"`
		Verified       int64   `json:"verified"`
		Deleted        int64   `json:"deleted"`
		WouldDelete    int64   `json:"would_delete"`
		BackedUp       int64   `json:"backed_up"`
		SourcesRemoved int64   `json:"sources_removed"`
		SourceDirsGone int64   `json:"source_dirs_removed"`
		Unlogged       int64   `json:"not_logged"`
		ElapsedSeconds float64 `json:"elapsed_seconds"`
	}{
		Time: time.Now().UTC().Format(timeFormat), Action: "run-end", ExitCode: exitCode(runErr), Status: status,
		Copied: s.Copied, Cloned: s.Cloned, Deduped: s.Deduped, Linked: s.Linked, Skipped: s.Skipped,
		MetaUpdated: s.MetaUpdated, Failed: s.Failed, Mismatches: s.Mismatches, Bytes: s.Bytes,
		Verified: s.Verified, Deleted: s.Deleted, WouldDelete: s.WouldDelete, BackedUp: s.BackedUp,
		SourcesRemoved: s.SourcesRemoved, SourceDirsGone: s.SourceDirsGone,
		Unlogged: l.unlogged, ElapsedSeconds: s.Elapsed.Seconds(),
	}
	l.mu.Unlock()
	l.write(append(out, end), true)
	if err := l.f.Close(); err != nil && l.err == nil {
		l.err = err
	}
	if l.err != nil {
		return fmt.Errorf("writing the --log file %q: %w", l.path, l.err)
	}
	return nil
}

// write appends lines to the log in one write, and fsyncs it when sync.
func (l *auditLog) write(lines []any, sync bool) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, v := range lines {
		if err := enc.Encode(v); err != nil {
			l.fail(err)
			return
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	if b.Len() > 0 {
		if _, err := l.f.Write(b.Bytes()); err != nil {
			l.err = err
			return
		}
	}
	if sync {
		if err := l.f.Sync(); err != nil {
			l.err = err
		}
	}
}

func (l *auditLog) fail(err error) {
	l.mu.Lock()
	if l.err == nil {
		l.err = err
	}
	l.mu.Unlock()
}

// byteRate is a --bwlimit value: bytes per second, a whole or decimal
// number with an optional K, M or G (binary multiples: 1024, 1024², 1024³;
// "iB" may follow, as in 4MiB).
type byteRate int64

func (r *byteRate) String() string {
	if *r == 0 {
		return ""
	}
	return strconv.FormatInt(int64(*r), 10)
}

func (r *byteRate) Type() string { return "rate" }

func (r *byteRate) Set(s string) error {
	n, err := parseRate(s)
	if err != nil {
		return err
	}
	*r = byteRate(n)
	return nil
}

// parseRate reads a --bwlimit value (see byteRate).
func parseRate(s string) (int64, error) {
	bad := fmt.Errorf("%q is not a rate: give bytes per second, such as 500K, 4M or 1.5G (K, M, G are 1024, 1024², 1024³)", s)
	num := strings.TrimSuffix(strings.TrimSpace(s), "iB")
	mult := 1.0
	if num != "" {
		switch num[len(num)-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		}
		if mult != 1 {
			num = num[:len(num)-1]
		}
	}
	if num == "" || strings.ContainsAny(num, "+-eEnNxXpP_") {
		return 0, bad
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, bad
	}
	v := f * mult
	if v < 1 {
		return 0, fmt.Errorf("%q: the rate must be at least 1 byte per second", s)
	}
	if v > 1<<62 {
		return 0, bad
	}
	return int64(v), nil
}
