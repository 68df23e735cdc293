package copyengine

import (
	"fmt"
	"time"

	"github.com/fastcopy/fastcopy/internal/durable"
)

// filesystems is every filesystem the run writes in, each with a
// directory it is flushed through (durable.Filesystems).
type filesystems struct{ durable.Filesystems }

// flushBatch makes a batch's data durable before any of its files is read
// back or takes its final name, in every mode (durable.Flush: one syncfs
// for each filesystem the batch wrote in, each file's own flush where a
// filesystem has none that waits). It returns the files to commit: those
// it failed or discarded are left out.
func (c *committer) flushBatch(batch []*pending) []*pending {
	e := c.e
	if e.ctx.Err() != nil {
		for _, p := range batch {
			c.discard(p)
		}
		return nil
	}
	at := time.Now() // what was placed before is flushed with this batch
	c.files = c.files[:0]
	for _, p := range batch {
		c.files = append(c.files, durable.File{Dir: p.dst.d, Name: p.tmp, Dev: p.dst.dev, DevOK: p.dst.devOK})
	}
	done := e.written.Flush(c.files, c.errs)
	clear(c.files) // keep no directory of a batch past it
	c.errs = done.Errs
	kept := batch[:0]
	for i, p := range batch {
		if err := done.Errs[i]; err != nil {
			c.failPending(p, fmt.Errorf("flushing to stable storage: %w", err))
			continue
		}
		kept = append(kept, p)
	}
	c.batchFlushed(at, done.Devs)
	return kept
}

// flushDirs makes the renames and directory metadata durable on every
// filesystem the run wrote in (durable.FlushAll): where a filesystem has
// no syncfs that waits, every destination directory is fsynced. The
// files' data was flushed by the committer already.
func (c *committer) flushDirs() error {
	e := c.e
	return e.written.FlushAll(durable.Dirs{Root: e.dstRoot, Open: e.staged.dirs.OpenDir, Rels: func() []string {
		var rels []string
		for _, dm := range c.dirs {
			if dm.dstRel != "" {
				rels = append(rels, dm.dstRel)
			}
		}
		return rels
	}})
}
