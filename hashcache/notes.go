package hashcache

import (
	"errors"

	bolt "go.etcd.io/bbolt"
)

// notePrefix keeps notes apart from the other keys of the meta bucket.
const notePrefix = "note:"

// Note returns the note stored under key (see SetNote), and whether there
// is one. A cache that cannot be read has none.
func (c *Cache) Note(key string) (string, bool) {
	var v string
	var ok bool
	if !c.readable() || !validKey(notePrefix+key) {
		return "", false
	}
	_ = protect(func() {
		_ = c.db.View(func(tx *bolt.Tx) error {
			if b := tx.Bucket(bucketMeta); b != nil {
				if got := b.Get([]byte(notePrefix + key)); got != nil {
					v, ok = string(got), true
				}
			}
			return nil
		})
	})
	return v, ok
}

// SetNote stores value under key, at once, in its own transaction: a small
// record the engine keeps per destination beside the file entries (the
// identity of the filesystem a mirror's source was on). Notes are not
// entries: Stats does not count them and Prune leaves them.
func (c *Cache) SetNote(key, value string) error {
	if c.readOnly {
		return errors.New("the hash cache is open read-only")
	}
	if !c.readable() {
		return errBroken
	}
	if !validKey(notePrefix + key) {
		return errors.New("note key too long")
	}
	var err error
	if perr := protect(func() {
		err = c.db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucketMeta)
			if err != nil {
				return err
			}
			return b.Put([]byte(notePrefix+key), []byte(value))
		})
	}); perr != nil {
		c.markBroken(perr)
		return errBroken
	}
	return err
}
