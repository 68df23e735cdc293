//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestResumeAfterKill kills the binary (SIGKILL) in the middle of a 200 MiB
// file and reruns it: the rerun says where it resumed, writes to the
// device little more than what the first run had not (counted by the
// kernel for the process: ru_oublock, its write_bytes), and the file is
// complete. The first run is stopped at a known point: a fault of the
// binary's (built with -tags fcfault) makes its 100th read of the file
// never return, so that 99 MiB are written when it is killed.
func TestResumeAfterKill(t *testing.T) {
	t.Parallel()
	bin := buildFastcopy(t, "fcfault")
	scr := scratchFS(t, 1<<30)
	src, dst := filepath.Join(scr, "src"), filepath.Join(scr, "dst")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	const size = 200 << 20
	data := make([]byte, size)
	rand.New(rand.NewSource(15)).Read(data)
	if err := os.WriteFile(filepath.Join(src, "video.mp4"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dst, ".video.mp4"+".fastcopy-tmp")

	p := &proc{cmd: exec.Command(bin, "--no-cache", src, dst), done: make(chan error, 1)}
	p.cmd.Env = append(os.Environ(), "FASTCOPY_FAULTS=read:hang:src/video.mp4#100")
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	var held int64
	for deadline := time.Now().Add(2 * time.Minute); held < 99<<20; {
		select {
		case err := <-p.done:
			t.Fatalf("the first run ended before it was killed: %v\n%s", err, p.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if st, err := os.Stat(tmp); err == nil {
			held = st.Size()
		}
		if time.Now().After(deadline) {
			_ = p.cmd.Process.Kill()
			t.Fatalf("the temporary holds %d bytes after two minutes; want 99 MiB", held)
		}
	}
	_ = p.cmd.Process.Kill()
	<-p.done

	second := exec.Command(bin, "--no-cache", "-v", "--json", src, dst)
	var stdout, stderr bytes.Buffer
	second.Stdout, second.Stderr = &stdout, &stderr
	if err := second.Run(); err != nil {
		t.Fatalf("rerun: %v\n%s", err, stderr.String())
	}
	written := second.ProcessState.SysUsage().(*syscall.Rusage).Oublock * 512
	t.Logf("the rerun wrote %d bytes to the device; stderr:\n%s", written, stderr.String())
	if !strings.Contains(stderr.String(), "video.mp4 (resumed at 99.0 MiB)") {
		t.Errorf("-v does not say the file was resumed at 99.0 MiB")
	}
	if written <= 0 || written >= size*6/10 {
		t.Errorf("the rerun wrote %d bytes of a %d-byte file; want less than 60%%", written, size)
	}
	var rep struct {
		Resumed      int64 `json:"resumed"`
		BytesResumed int64 `json:"bytes_resumed"`
		Verified     int64 `json:"verified"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Resumed != 1 || rep.BytesResumed != 99<<20 || rep.Verified != 1 {
		t.Errorf("--json: %+v; want 1 file resumed at 99 MiB, verified", rep)
	}
	got, err := os.ReadFile(filepath.Join(dst, "video.mp4"))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the resumed copy is not its source (%d bytes, %v)", len(got), err)
	}
	if _, err := os.Lstat(tmp); err == nil {
		t.Error("the temporary is left after the rerun")
	}
}
