//go:build linux

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The ext4 trap. ext4 without a journal (this machine's root filesystem)
// will not reuse an inode freed less than 60 s ago (360 s while its table
// block is dirty) whose table block is cached (recently_deleted and
// RECENTCY_MIN/RECENTCY_DIRTY in fs/ext4/ialloc.c), and every inode
// allocation scans its block group's bitmap from the start. Right after
// rm -rf of the previous copy, each create of the next one stepped over
// thousands of such inodes: in a copy of 20,000 files perf found about a
// quarter of fastcopy's CPU time in recently_deleted, and a fifth of
// cp -a's, although the caches had been dropped after the wipe (the copy
// reads the inode tables back as it goes). That is the benchmark measuring
// its own wipes, and on a filesystem with a journal it does not happen at
// all. So a many-file destination is not deleted before the next run: it
// is renamed into a trash directory, and the trash is emptied only when it
// grows past trashBudget (and at the end); after emptying it the harness
// flushes the filesystem (so the table blocks are clean) and the next run
// waits until the freed inodes are no longer recent.

// manyFiles is the dataset size (in files) from which a destination is put
// in the trash instead of deleted at once: a few freed inodes cost nothing.
const manyFiles = 1000

// trashBudget is the most the trash may hold, in bytes: a third of the
// free space, at most 24 GiB.
func trashBudget(dir string) int64 {
	free, err := freeBytes(dir)
	if err != nil {
		return 0
	}
	return min(free/3, 24<<30)
}

// trash renames dirs into the trash directory (those that exist), counting
// bytes against the budget; with few files it deletes them at once.
func (b *bench) trash(files int, bytes int64, dirs ...string) error {
	if files < manyFiles || b.freeWindow == 0 {
		return b.remove(dirs...)
	}
	if err := os.MkdirAll(b.trashDir, 0o755); err != nil {
		return err
	}
	for _, d := range dirs {
		b.trashSeq++
		err := os.Rename(d, filepath.Join(b.trashDir, strconv.Itoa(b.trashSeq)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		b.trashBytes += bytes
	}
	if b.trashBytes > trashBudget(b.trashDir) {
		return b.emptyTrash()
	}
	return nil
}

// emptyTrash deletes the trash and notes when, for waitFreed.
func (b *bench) emptyTrash() error {
	if b.trashBytes == 0 {
		return nil
	}
	start := time.Now()
	if err := b.remove(b.trashDir); err != nil {
		return err
	}
	if err := syncFS(b.dstRoot); err != nil { // clean table blocks: the shorter wait
		return err
	}
	b.logf("emptied the trash (%s): %.1f s", humanBytes(b.trashBytes), time.Since(start).Seconds())
	b.trashBytes, b.freedAt = 0, time.Now()
	return nil
}

// waitFreed waits, before a timed run, until inodes freed by the last
// emptying of the trash are no longer recent to ext4, and returns the wait.
func (b *bench) waitFreed() time.Duration {
	if b.freedAt.IsZero() {
		return 0
	}
	wait := time.Until(b.freedAt.Add(b.freeWindow))
	b.freedAt = time.Time{}
	if wait <= 0 {
		return 0
	}
	b.logf("waiting %.0f s for the inodes freed by emptying the trash to stop being recent", wait.Seconds())
	select {
	case <-time.After(wait):
	case <-b.ctx.Done():
	}
	return wait
}

// recentWindow returns how long ext4 treats a freed inode of the
// filesystem holding dir as recent once its table block is clean (60 s),
// with a second to spare, or 0 when the trap does not apply: not ext4, or
// ext4 with a journal (its journal_task in /sys/fs/ext4 names a task;
// without a journal it reads "<none>").
func recentWindow(dir string) (time.Duration, string) {
	m, ok := mountOfDir(dir)
	if !ok || m.fsType != "ext4" {
		return 0, ""
	}
	dev := filepath.Base(m.source)
	task, err := os.ReadFile(filepath.Join("/sys/fs/ext4", dev, "journal_task"))
	if err != nil || strings.TrimSpace(string(task)) != "<none>" {
		return 0, ""
	}
	return 61 * time.Second, fmt.Sprintf("%s (%s) is ext4 without a journal", m.point, m.source)
}

// freeBytes is the space available to this user on dir's filesystem.
func freeBytes(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * st.Bsize, nil
}
