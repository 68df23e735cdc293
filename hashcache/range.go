package hashcache

import (
	"bytes"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// Range calls fn with every entry whose path starts with prefix, in path
// order, until fn returns false: the main file's, with what the journals
// this cache reads say instead where they hold the path. Entries that do
// not decode are skipped. It reads in one transaction per file: fn must be
// quick and must not call the cache.
func (c *Cache) Range(prefix string, fn func(path string, e Entry) bool) {
	if c.writer.closed() {
		return
	}
	p := []byte(prefix)
	c.main.mu.RLock()
	over := c.journals.below(p)
	c.main.mu.RUnlock()
	keys := make([]string, 0, len(over))
	for k := range over {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	emit := func(k string, v []byte) bool {
		e, ok := decodeValue(k, v)
		return !ok || fn(k, e)
	}
	i := 0
	done := false
	c.main.view(func(_ func([]byte) []byte, b *bolt.Bucket) {
		if b == nil {
			return
		}
		cur := b.Cursor()
		for k, v := cur.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = cur.Next() {
			for ; i < len(keys) && keys[i] < string(k); i++ {
				if !emit(keys[i], over[keys[i]]) {
					done = true
					return
				}
			}
			if i < len(keys) && keys[i] == string(k) {
				v = over[keys[i]]
				i++
			}
			if !emit(string(k), v) {
				done = true
				return
			}
		}
	})
	for ; !done && i < len(keys); i++ {
		if !emit(keys[i], over[keys[i]]) {
			return
		}
	}
}

// below returns what the journals this cache reads hold for the paths
// below prefix p, newest first wins (nil: removed); they are few next to
// the main file's. The main file's lock (mainFile.mu) must be held for
// reading.
func (js *journals) below(p []byte) map[string][]byte {
	over := map[string][]byte{} // nil: removed
	for _, j := range js.reading() {
		_ = protect(func() {
			_ = j.db.View(func(tx *bolt.Tx) error {
				v, ok := journalView(tx)
				if !ok {
					return nil
				}
				for _, b := range []*bolt.Bucket{v.files, v.deleted} {
					cur := b.Cursor()
					for k, val := cur.Seek(p); k != nil && bytes.HasPrefix(k, p); k, val = cur.Next() {
						if _, seen := over[string(k)]; seen {
							continue
						}
						if b == v.deleted {
							val = nil
						}
						over[string(k)] = bytes.Clone(val)
					}
				}
				return nil
			})
		})
	}
	return over
}
