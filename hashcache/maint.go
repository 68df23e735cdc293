package hashcache

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Stats describes a cache file.
type Stats struct {
	Path          string
	Entries       int
	FileBytes     int64   // size of the file, free pages included
	UsedBytes     int64   // pages up to the high-water mark; bbolt grows the file ahead of it
	BytesPerEntry float64 // FileBytes / Entries; 0 when empty
	// Pending counts the entries in journals that processes sharing the
	// cache wrote while another had it open (see the package
	// documentation), which the next process to have the file alone
	// merges. They are found by lookups already; an entry that is also in
	// the file, or in two journals, is counted each time.
	Pending int
}

// Stats counts the entries (a full pass over the file) and reports the size
// of the cache file.
func (c *Cache) Stats() (Stats, error) {
	s := Stats{Path: c.path}
	if c.writer.closed() {
		return s, ErrClosed
	}
	fi, err := os.Stat(c.path)
	switch {
	case err == nil:
		s.FileBytes = fi.Size()
	case !errors.Is(err, fs.ErrNotExist):
		return s, fmt.Errorf("hash cache: %w", err)
	}
	c.main.view(func(_ func([]byte) []byte, main *bolt.Bucket) {
		if main != nil {
			s.Entries = main.Stats().KeyN
			s.UsedBytes = main.Tx().Size()
		}
	})
	c.main.mu.RLock()
	s.Pending = c.journals.pending()
	c.main.mu.RUnlock()
	if s.Entries > 0 {
		s.BytesPerEntry = float64(s.FileBytes) / float64(s.Entries)
	}
	return s, nil
}

// pending counts the entries in the journals this cache reads. The main
// file's lock (mainFile.mu) must be held.
func (js *journals) pending() int {
	n := 0
	for _, j := range js.reading() {
		_ = protect(func() {
			_ = j.db.View(func(tx *bolt.Tx) error {
				if v, ok := journalView(tx); ok {
					n += v.files.Stats().KeyN
				}
				return nil
			})
		})
	}
	return n
}

// pruneChunk is how many keys Prune checks per read transaction.
const pruneChunk = 1000

// Prune removes the entries of the main file whose file is gone, as told
// by exists (the caller passes a function built on os.Lstat), and the
// entries that do not decode. It walks the keys in chunks, so that exists
// runs outside any transaction, and removes them as Delete does: at once
// when no other process has the cache open, else through the journal, when
// the file is next had alone (an entry another process records meanwhile,
// hashed after the removal, is kept).
func (c *Cache) Prune(exists func(path string) bool) (removed int, err error) {
	switch {
	case c.writer.closed():
		return 0, ErrClosed
	case c.readOnly:
		return 0, ErrReadOnly
	case !c.writer.running:
		return 0, fmt.Errorf("hash cache %q: not in use for this run", c.path)
	}
	var after []byte
	for {
		type key struct {
			k  []byte
			ok bool // value decodes
		}
		var keys []key
		c.main.view(func(_ func([]byte) []byte, b *bolt.Bucket) {
			if b == nil {
				return
			}
			cur := b.Cursor()
			k, v := cur.First()
			if after != nil {
				k, v = cur.Seek(after)
				if bytes.Equal(k, after) {
					k, v = cur.Next()
				}
			}
			for ; k != nil && len(keys) < pruneChunk; k, v = cur.Next() {
				_, ok := decodeValue(string(k), v)
				keys = append(keys, key{bytes.Clone(k), ok})
			}
		})
		if !c.main.readable() {
			return removed, fmt.Errorf("%w: %q", ErrCorrupt, c.path)
		}
		if len(keys) == 0 {
			break
		}
		after = keys[len(keys)-1].k
		for _, k := range keys {
			if !k.ok || !exists(string(k.k)) {
				c.Delete(string(k.k))
				removed++
			}
		}
	}
	if err := c.Flush(); err != nil {
		return removed, fmt.Errorf("hash cache %q: prune: %w", c.path, err)
	}
	if !c.main.readable() {
		return removed, fmt.Errorf("%w: %q", ErrCorrupt, c.path)
	}
	return removed, nil
}

// Clear removes the cache file at path, the journals of processes that no
// longer have them open, the copies of bad caches that Open moved aside,
// and the presence file. It does not wait for a fastcopy that has the cache open: that one
// goes on with what it had open, and what it records from then on,
// including its journal, goes to a new cache file at path. A missing file
// is not an error.
func Clear(path string) error {
	// RemoveOpen: a run may hold these files (on Windows a file removed
	// while open keeps its name until closed; see fileio.RemoveOpen).
	err := fileio.RemoveOpen(path)
	for _, p := range journalPaths(path) {
		o := openDB(p, Options{LockTimeout: time.Nanosecond})
		if errors.Is(o.err, berrors.ErrTimeout) || (o.openErr != nil && !errors.Is(o.openErr, fs.ErrNotExist)) {
			continue // still written, or read
		}
		rerr := fileio.RemoveOpen(p)
		o.release()
		if rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			_ = os.Remove(p)
		}
	}
	removeCorrupt(path, "")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("hash cache: %w", err)
	}
	// The presence file goes with the file it is about: a fastcopy that
	// has the old ones open takes the new presence file at its next check
	// of it (see fileio.Presence.Alone), so that runs started since see it.
	// (With the cache file left, it stays too: two presence files of one
	// cache file could each look alone.)
	if rerr := fileio.RemoveOpen(path + usersSuffix); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		return fmt.Errorf("hash cache: %w", rerr)
	}
	return nil
}
