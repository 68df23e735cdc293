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
	if !c.main.readable() || !validKey(notePrefix+key) {
		return "", false
	}
	c.main.mu.RLock()
	defer c.main.mu.RUnlock()
	db := c.main.handle()
	if db == nil {
		return "", false // the main file is not open (being set right by another process)
	}
	_ = protect(func() {
		_ = db.View(func(tx *bolt.Tx) error {
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

// errNoteBusy is SetNote's error when another process has the cache
// file open: a note is written to the main file only, never journalled.
var errNoteBusy = errors.New("the hash cache is in use by another fastcopy: the note is not stored this time")

// SetNote stores value under key, at once, in its own transaction of the
// main file, had alone for the moment (as a commit has it): a small
// record the engine keeps per destination beside the file entries (the
// identity of the filesystem a mirror's source was on). Notes are not
// entries: Stats does not count them and Prune leaves them. While another
// process has the file open, the note is not stored (errNoteBusy).
func (c *Cache) SetNote(key, value string) error {
	if c.readOnly {
		return errors.New("the hash cache is open read-only")
	}
	if !c.main.readable() {
		return errors.New("the hash cache is not usable")
	}
	if !validKey(notePrefix + key) {
		return errors.New("note key too long")
	}
	put := func(db *bolt.DB) error {
		return protectErr(func() error {
			return db.Update(func(tx *bolt.Tx) error {
				b, err := tx.CreateBucketIfNotExists(bucketMeta)
				if err != nil {
					return err
				}
				return b.Put([]byte(notePrefix+key), []byte(value))
			})
		})
	}
	c.main.mu.Lock()
	defer c.main.mu.Unlock()
	if db := c.main.held(); db != nil {
		// Had alone already, as for a commit.
		err := put(db)
		if err != nil {
			c.main.letGo()
		}
		return err
	}
	c.main.closeMain()
	defer c.main.reopenMain()
	held, _, err := c.main.exclusive(put, false)
	if err == nil && !held {
		err = errNoteBusy
	}
	return err
}
