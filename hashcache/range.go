package hashcache

import (
	"bytes"

	bolt "go.etcd.io/bbolt"
)

// Range calls fn with every entry whose path starts with prefix, in path
// order, until fn returns false. Entries that do not decode are skipped. It
// reads in one transaction: fn must be quick and must not call the cache.
func (c *Cache) Range(prefix string, fn func(path string, e Entry) bool) {
	if c.db == nil || c.isClosed() {
		return
	}
	p := []byte(prefix)
	c.view(func(b *bolt.Bucket) {
		cur := b.Cursor()
		for k, v := cur.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = cur.Next() {
			e, ok := decodeValue(string(k), v)
			if ok && !fn(string(k), e) {
				return
			}
		}
	})
}
