package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fastcopy/fastcopy/verify"
)

// logRecord is one line of a --log file, as a reader takes it.
type logRecord struct {
	Time       string   `json:"time"`
	Action     string   `json:"action"`
	Path       string   `json:"path"`
	PathBase64 []byte   `json:"path_base64"`
	Size       *int64   `json:"size"`
	XXH128     string   `json:"xxh128"`
	Error      string   `json:"error"`
	ExitCode   *int     `json:"exit_code"`
	Failed     int64    `json:"failed"`
	Copied     int64    `json:"copied"`
	Skipped    int64    `json:"skipped"`
	Deduped    int64    `json:"deduplicated"`
	Sources    []string `json:"sources"`
	Dest       string   `json:"dest"`
	Version    string   `json:"version"`
}

// name is the file a line names: its exact bytes.
func (r logRecord) name() string {
	if r.PathBase64 != nil {
		return string(r.PathBase64)
	}
	return r.Path
}

// readLog reads a --log file: every line must be a whole JSON object,
// ended by a newline.
func readLog(t *testing.T, path string) ([]logRecord, []byte) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		t.Errorf("the log does not end with a whole line: %q", raw[max(0, len(raw)-80):])
	}
	var recs []logRecord
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r logRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("a log line is not a JSON object: %v\n%s", err, sc.Bytes())
		}
		recs = append(recs, r)
	}
	return recs, raw
}

var logTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$`)

// runs splits a log's records into runs: each from its run-start line to
// its run-end line.
func runs(t *testing.T, recs []logRecord) [][]logRecord {
	t.Helper()
	var out [][]logRecord
	for _, r := range recs {
		if !logTime.MatchString(r.Time) {
			t.Errorf("time %q is not RFC 3339 in UTC with nanoseconds", r.Time)
		}
		switch {
		case r.Action == "run-start":
			out = append(out, []logRecord{r})
		case len(out) == 0:
			t.Fatalf("a line before the first run-start: %+v", r)
		default:
			out[len(out)-1] = append(out[len(out)-1], r)
		}
	}
	for i, run := range out {
		if last := run[len(run)-1]; last.Action != "run-end" || last.ExitCode == nil {
			t.Errorf("run %d does not end with a run-end line with its exit code: %+v", i, last)
		}
	}
	return out
}

func xxhOf(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return verify.Hex(verify.Bytes(data))
}

// A copy logs a line per file placed with its action, size and digest, a
// failure with its error, a name that is not UTF-8 with its bytes; a rerun
// appends its own run, files unchanged with the digest found on both
// sides. Digests are those of the files' bytes (and xxh128sum's, where it
// is installed).
func TestAuditLog(t *testing.T) {
	windowsSkipNonUTF8(t, "caf\xe9") // its Latin-1 name
	dir := t.TempDir()
	src, dst, logf, db := filepath.Join(dir, "src"), filepath.Join(dir, "dst"), filepath.Join(dir, "audit.log"), filepath.Join(dir, "hashes.db")
	a := bytes.Repeat([]byte("fastcopy audit "), 20000)
	latin1 := "caf\xe9"
	files := map[string][]byte{"a": a, "dup": a, "sub/b": []byte("bee\n"), "empty": nil, latin1: []byte("l1\n"), "clash": []byte("data\n")}
	for rel, data := range files {
		p := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// a and dup alike in content and metadata: one is linked to the other.
	when := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, n := range []string{"a", "dup"} {
		if err := os.Chtimes(filepath.Join(src, n), when, when); err != nil {
			t.Fatal(err)
		}
	}
	// A directory where the source has the file clash: that file fails.
	if err := os.MkdirAll(filepath.Join(dst, "clash", "inner"), 0o755); err != nil {
		t.Fatal(err)
	}
	time.Sleep(80 * time.Millisecond) // past the settle window of the sources

	want := map[string]string{}
	for rel := range files {
		want[rel] = xxhOf(t, filepath.Join(src, rel))
	}
	if tool, err := exec.LookPath("xxh128sum"); err == nil {
		out, err := exec.Command(tool, filepath.Join(src, "a"), filepath.Join(src, "empty")).Output()
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(out))
		if len(f) != 4 || f[0] != want["a"] || f[2] != want["empty"] {
			t.Fatalf("xxh128sum says %q; the test's digests are %s and %s", out, want["a"], want["empty"])
		}
	}

	copyRun := func(wantCode int) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"-q", "--cache", db, "--log", logf, src, dst}, &stdout, &stderr); code != wantCode {
			t.Fatalf("exit %d, want %d\n%s%s", code, wantCode, stdout.String(), stderr.String())
		}
	}
	copyRun(exitSomeFailed)
	st, err := os.Stat(logf)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644&^currentUmask() {
		t.Errorf("the log was made with mode %v", st.Mode().Perm())
	}
	recs, first := readLog(t, logf)
	rs := runs(t, recs)
	if len(rs) != 1 {
		t.Fatalf("%d runs in the log after one run", len(rs))
	}
	start, end := rs[0][0], rs[0][len(rs[0])-1]
	if start.Dest != dst || len(start.Sources) != 1 || start.Sources[0] != src || start.Version == "" {
		t.Errorf("run-start line: %+v", start)
	}
	if *end.ExitCode != exitSomeFailed || end.Failed != 1 || end.Copied != 4 || end.Deduped != 1 {
		t.Errorf("run-end line: %+v", end)
	}
	got := map[string]logRecord{}
	actions := map[string]int{}
	for _, r := range rs[0][1 : len(rs[0])-1] {
		if _, dup := got[r.name()]; dup {
			t.Errorf("two lines for %q", r.name())
		}
		got[r.name()] = r
		actions[r.Action]++
	}
	if len(got) != len(files) {
		t.Errorf("%d files logged, want %d: %+v", len(got), len(files), got)
	}
	for rel, data := range files {
		r, ok := got[rel]
		if !ok {
			continue
		}
		if rel == "clash" {
			if r.Action != "fail" || !strings.Contains(r.Error, "is a directory") || r.XXH128 != "" || r.Size != nil {
				t.Errorf("clash: %+v; want a fail line with the error and neither size nor digest", r)
			}
			continue
		}
		if r.Size == nil || *r.Size != int64(len(data)) || r.XXH128 != want[rel] {
			t.Errorf("%q: %+v; want size %d, xxh128 %s", rel, r, len(data), want[rel])
		}
	}
	if actions["copy"] != 4 || actions["dedup-link"] != 1 || actions["fail"] != 1 {
		t.Errorf("actions %v; want 4 copy, 1 dedup-link, 1 fail", actions)
	}
	if r := got[latin1]; r.Path != "caf\uFFFD" || base64.StdEncoding.EncodeToString(r.PathBase64) != "Y2Fm6Q==" {
		t.Errorf("a Latin-1 name: path %q, path_base64 %q", r.Path, r.PathBase64)
	}

	// The rerun appends: the first run's lines stay as they were.
	if err := os.RemoveAll(filepath.Join(dst, "clash")); err != nil {
		t.Fatal(err)
	}
	copyRun(exitOK)
	recs, all := readLog(t, logf)
	if !bytes.HasPrefix(all, first) {
		t.Fatal("the second run did not append: the first run's lines changed")
	}
	rs = runs(t, recs)
	if len(rs) != 2 {
		t.Fatalf("%d runs in the log after two", len(rs))
	}
	seen := map[string]bool{}
	for _, r := range rs[1][1 : len(rs[1])-1] {
		seen[r.name()] = true
		wantAct := "skip"
		if r.name() == "clash" {
			wantAct = "copy"
		}
		if r.Action != wantAct || r.XXH128 != want[r.name()] || r.Size == nil {
			t.Errorf("rerun: %+v; want %s with size and xxh128 %s", r, wantAct, want[r.name()])
		}
	}
	if len(seen) != len(files) {
		t.Errorf("the rerun logged %d files, want %d", len(seen), len(files))
	}
	if end := rs[1][len(rs[1])-1]; *end.ExitCode != 0 || end.Skipped != 5 || end.Copied != 1 {
		t.Errorf("rerun's run-end line: %+v", end)
	}
}

func currentUmask() os.FileMode {
	dir, err := os.MkdirTemp("", "umask")
	if err != nil {
		return 0o022
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "f")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o777)
	if err != nil {
		return 0o022
	}
	f.Close()
	st, err := os.Stat(p)
	if err != nil {
		return 0o022
	}
	return 0o777 &^ st.Mode().Perm()
}

// A --log inside DEST, by any spelling, or one that cannot be opened, is
// refused before anything is written (exit 2), naming the path.
func TestAuditLogRefused(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	if err := os.MkdirAll(filepath.Join(src, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dst, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dst, "sub"), filepath.Join(dir, "into-dst")); err != nil {
		t.Fatal(err)
	}
	linked := windowsSymlinkMade(filepath.Join(dir, "into-dst"))
	for _, c := range []struct{ log, says string }{
		{filepath.Join(dst, "audit.log"), "inside the destination"},
		{filepath.Join(dir, "into-dst", "audit.log"), "inside the destination"}, // through a symlink
		{filepath.Join(dst, "sub", "..", "x.log"), "inside the destination"},
		{filepath.Join(dir, "no", "such", "dir", "audit.log"), "cannot open the --log file"},
		{src + "/d", "cannot open the --log file"}, // a directory
	} {
		if !linked && strings.Contains(c.log, "into-dst") {
			t.Logf("not checked: --log through a symlink: os.Symlink reported success and made none (Wine makes none)")
			continue
		}
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"--no-cache", "--log", c.log, src, dst}, &stdout, &stderr)
		if code != exitUsage {
			t.Errorf("--log %s: exit %d, want 2\n%s", c.log, code, stderr.String())
		}
		if !strings.Contains(stderr.String(), "fastcopy: error: \""+c.log+"\": ") || !strings.Contains(stderr.String(), c.says) || !strings.Contains(stderr.String(), "fastcopy: hint: ") {
			t.Errorf("--log %s: stderr %q; want the path quoted, %q and a hint", c.log, stderr.String(), c.says)
		}
		if _, err := os.Stat(filepath.Join(dst, "f")); err == nil {
			t.Fatalf("--log %s: the copy ran", c.log)
		}
		if _, err := os.Stat(filepath.Join(dst, "audit.log")); err == nil {
			t.Fatalf("--log %s: the refused log was made in DEST", c.log)
		}
	}
}

// A last line torn by a killed run is cut before the next run appends (with
// a warning); a file whose last line is not one of a log's is refused.
func TestAuditLogTornLine(t *testing.T) {
	dir := t.TempDir()
	src, dst, logf := filepath.Join(dir, "src"), filepath.Join(dir, "dst"), filepath.Join(dir, "audit.log")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	whole := `{"time":"2026-01-01T00:00:00.000000000Z","action":"run-start"}` + "\n"
	if err := os.WriteFile(logf, []byte(whole+`{"time":"2026-01-01T00:00:01.0000`), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-q", "--no-cache", "--log", logf, src, dst}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "fastcopy: warning: \""+logf+"\": removed a torn last line (33 bytes)") {
		t.Errorf("stderr %q; want a warning that the torn line was cut", stderr.String())
	}
	recs, raw := readLog(t, logf)
	if !bytes.HasPrefix(raw, []byte(whole+`{"time":"`)) || len(runs(t, recs[1:])) != 1 {
		t.Errorf("the log after the cut and a run:\n%s", raw)
	}

	notLog := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notLog, []byte("my notes\nno newline"), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := run(context.Background(), []string{"-q", "--no-cache", "--log", notLog, src, dst}, &stdout, &stderr); code != exitUsage {
		t.Errorf("--log naming a file that is not a log: exit %d, want 2\n%s", code, stderr.String())
	}
	if data, _ := os.ReadFile(notLog); string(data) != "my notes\nno newline" {
		t.Errorf("the file that is not a log was changed: %q", data)
	}
}

// With --dry-run the log gets a would-copy line per file, with its size;
// with --no-sync the lines of the files copied are written at the end.
func TestAuditLogDryRunNoSync(t *testing.T) {
	dir := t.TempDir()
	src, dst, logf := filepath.Join(dir, "src"), filepath.Join(dir, "dst"), filepath.Join(dir, "audit.log")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "f"), []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(80 * time.Millisecond)
	for _, flag := range []string{"-n", "--no-sync"} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"-q", "--no-cache", flag, "--log", logf, src, dst}, &stdout, &stderr); code != 0 {
			t.Fatalf("%s: exit %d\n%s", flag, code, stderr.String())
		}
	}
	recs, _ := readLog(t, logf)
	rs := runs(t, recs)
	if len(rs) != 2 || len(rs[0]) != 3 || len(rs[1]) != 3 {
		t.Fatalf("want two runs of one file each: %+v", rs)
	}
	if r := rs[0][1]; r.Action != "would-copy" || r.Path != "f" || r.Size == nil || *r.Size != 5 || r.XXH128 != "" {
		t.Errorf("--dry-run: %+v; want would-copy f, size 5, no digest", r)
	}
	if r := rs[1][1]; r.Action != "copy" || r.Path != "f" || r.XXH128 != verify.Hex(verify.Bytes([]byte("12345"))) {
		t.Errorf("--no-sync: %+v; want copy f with its digest", r)
	}
}

// A log that cannot be written to the end makes a run that otherwise
// succeeded exit 1, saying so.
func TestAuditLogWriteFails(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skipf("skipping: no /dev/full to fail writes: %v", err)
	}
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-q", "--no-cache", "--log", "/dev/full", src, dst}, &stdout, &stderr); code != exitFatal {
		t.Fatalf("exit %d, want 1\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), `fastcopy: error: writing the --log file "/dev/full": `) || !strings.Contains(stderr.String(), "fastcopy: hint: ") {
		t.Errorf("stderr %q", stderr.String())
	}
}
