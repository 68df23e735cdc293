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
	if c.isClosed() {
		return
	}
	p := []byte(prefix)
	// The journals' paths below prefix, newest first wins: they are few
	// next to the main file's.
	over := map[string][]byte{} // nil: removed
	c.dbMu.RLock()
	for _, j := range c.journals() {
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
	c.dbMu.RUnlock()
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
	c.view(func(_ func([]byte) []byte, b *bolt.Bucket) {
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
