package hashcache

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"

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
}

// Stats counts the entries (a full pass over the file) and reports the size
// of the cache file.
func (c *Cache) Stats() (Stats, error) {
	s := Stats{Path: c.path}
	if c.isClosed() {
		return s, ErrClosed
	}
	fi, err := os.Stat(c.path)
	switch {
	case err == nil:
		s.FileBytes = fi.Size()
	case !errors.Is(err, fs.ErrNotExist):
		return s, fmt.Errorf("hash cache: %w", err)
	}
	c.view(func(b *bolt.Bucket) {
		s.Entries = b.Stats().KeyN
		s.UsedBytes = b.Tx().Size()
	})
	if s.Entries > 0 {
		s.BytesPerEntry = float64(s.FileBytes) / float64(s.Entries)
	}
	return s, nil
}

func (c *Cache) isClosed() bool {
	c.q.mu.Lock()
	defer c.q.mu.Unlock()
	return c.q.closed
}

// pruneChunk is how many keys Prune checks per read transaction, and the
// most it deletes per write transaction.
const pruneChunk = 1000

// Prune removes the entries whose file is gone, as told by exists (the
// caller passes a function built on os.Lstat), and the entries that do not
// decode. It walks the keys in chunks, so that exists runs outside any
// transaction and the writer is never held up for long.
func (c *Cache) Prune(exists func(path string) bool) (removed int, err error) {
	switch {
	case c.isClosed():
		return 0, ErrClosed
	case c.readOnly:
		return 0, ErrReadOnly
	case c.db == nil:
		return 0, fmt.Errorf("hash cache %q: not in use for this run", c.path)
	}
	var after []byte
	for {
		type key struct {
			k  []byte
			ok bool // value decodes
		}
		var keys []key
		c.view(func(b *bolt.Bucket) {
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
		if c.broken.Load() {
			return removed, fmt.Errorf("%w: %q", ErrCorrupt, c.path)
		}
		if len(keys) == 0 {
			return removed, nil
		}
		after = keys[len(keys)-1].k
		var gone [][]byte
		for _, k := range keys {
			if !k.ok || !exists(string(k.k)) {
				gone = append(gone, k.k)
			}
		}
		if len(gone) == 0 {
			continue
		}
		err := c.update(func(b *bolt.Bucket) error {
			for _, k := range gone {
				if err := b.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if errors.Is(err, errBroken) {
			return removed, fmt.Errorf("%w: %q", ErrCorrupt, c.path)
		}
		if err != nil {
			return removed, fmt.Errorf("hash cache %q: prune: %w", c.path, err)
		}
		removed += len(gone)
	}
}

// clearLockTimeout is DefaultLockTimeout; tests shorten it.
var clearLockTimeout = DefaultLockTimeout

// Clear removes the cache file at path, and the copies of bad caches that
// Open moved aside. It waits DefaultLockTimeout for a fastcopy that has the
// cache open and then fails with an error wrapping ErrLocked. A missing file
// is not an error.
func Clear(path string) error {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		removeCorrupt(path, "")
		return nil
	}
	o := openDB(path, Options{LockTimeout: clearLockTimeout})
	switch {
	case errors.Is(o.err, berrors.ErrTimeout):
		return fmt.Errorf("hash cache %q: %w", path, errCacheLocked)
	case o.openErr != nil:
		return fmt.Errorf("hash cache: %w", o.openErr)
	}
	// Remove while holding the lock where the platform allows it, so that a
	// fastcopy starting now cannot pick up the old file.
	err := os.Remove(path)
	o.release()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		err = os.Remove(path)
	}
	removeCorrupt(path, "")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("hash cache: %w", err)
	}
	return nil
}
