package hashcache

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fastcopy/fastcopy/internal/fileio"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// A journal holds what one process committed while another had the main
// file open, so that it could not write there: a small bbolt file next to
// the main one, PATH.j-<random>, with the main file's schema plus a bucket
// "deleted" that maps a removed path to the time of its removal (8 bytes,
// big endian). Its process holds it open, and so locked, until it closes
// the cache; whoever next has the main file alone merges it and removes it.
type journal struct {
	db   *bolt.DB
	path string
}

// journals are the journals a cache reads with the main file: this
// process's own, while it holds entries not in the main file, and the
// finished ones of other processes that could not be merged yet. They have
// no lock of their own: the main file's (mainFile.mu) guards them, for a
// commit merges them into the main file while it swaps the main file's
// handle, and lookups must see the two at one moment.
type journals struct {
	path   string       // the main file's
	own    *journal     // this process's journal, while it holds entries not in the main file
	others []*journal   // finished journals of other processes, read-only, newest first
	merged atomic.Int64 // journals merged into the main file, for tests
}

var bucketDeleted = []byte("deleted")

const (
	journalInfix    = ".j-"
	journalTmpInfix = ".jtmp-"
	// staleTmpJournal is how old a journal still under its temporary name
	// must be before it is taken for one whose process died before
	// renaming it (or whose rename a power cut undid).
	staleTmpJournal = time.Minute
)

// IsJournal reports whether name, a file in the directory of the cache
// file at cachePath, is one of its journals (in the making or not).
func IsJournal(cachePath, name string) bool {
	base := filepath.Base(cachePath)
	return strings.HasPrefix(name, base+journalInfix) || strings.HasPrefix(name, base+journalTmpInfix)
}

// jview is a journal's buckets in a read transaction.
type jview struct{ files, deleted *bolt.Bucket }

func journalView(tx *bolt.Tx) (jview, bool) {
	f, d := tx.Bucket(bucketFiles), tx.Bucket(bucketDeleted)
	if f == nil || d == nil {
		return jview{}, false
	}
	return jview{f, d}, true
}

// create creates this process's journal. It is created under a
// temporary name and renamed once bbolt holds its lock, so that no other
// process ever takes a journal in the making for a finished one.
func (js *journals) create() (*journal, error) {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	id := hex.EncodeToString(rnd[:])
	tmp := js.path + journalTmpInfix + id
	o := openDB(tmp, Options{LockTimeout: time.Nanosecond})
	if o.openErr != nil {
		return nil, o.openErr
	}
	if o.err != nil {
		o.release()
		_ = os.Remove(tmp)
		return nil, o.err
	}
	err := protectErr(func() error {
		return o.db.Update(func(tx *bolt.Tx) error {
			meta, err := tx.CreateBucketIfNotExists(bucketMeta)
			if err != nil {
				return err
			}
			if err := meta.Put(keyVersion, binary.AppendUvarint(nil, schemaVersion)); err != nil {
				return err
			}
			if _, err := tx.CreateBucketIfNotExists(bucketFiles); err != nil {
				return err
			}
			_, err = tx.CreateBucketIfNotExists(bucketDeleted)
			return err
		})
	})
	final := js.path + journalInfix + id
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		o.release()
		_ = os.Remove(tmp)
		return nil, err
	}
	syncDir(filepath.Dir(js.path))
	return &journal{db: o.db, path: final}, nil
}

// syncDir makes a new name in dir durable; where it fails, a power cut may
// leave the journal under its temporary name, which is merged all the same
// once stale.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// write commits batch (sorted by key) to the journal in one transaction.
func (j *journal) write(batch []op) error {
	return protectErr(func() error {
		return j.db.Update(func(tx *bolt.Tx) error {
			v, ok := journalView(tx)
			if !ok {
				return errNoBucket
			}
			v.files.FillPercent = fillPercent
			for _, o := range batch {
				k := []byte(o.key)
				var err error
				if o.del {
					if err = v.files.Delete(k); err == nil {
						err = v.deleted.Put(k, binary.BigEndian.AppendUint64(nil, uint64(o.at)))
					}
				} else if err = v.deleted.Delete(k); err == nil {
					err = v.files.Put(k, o.val)
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// close closes the journal; remove removes its file too (while it is still
// open, where the platform allows, so that no other process takes it up
// again in between).
func (j *journal) close(remove bool) {
	var err error
	if remove {
		err = fileio.RemoveOpen(j.path) // see fileio.RemoveOpen for Windows
	}
	_ = protect(func() { _ = j.db.Close() })
	if remove && err != nil {
		_ = os.Remove(j.path)
	}
}

// journalPaths lists the journals next to the cache file at cachePath,
// oldest first, own included: the renamed ones, and those left under their
// temporary name for longer than staleTmpJournal.
func journalPaths(cachePath string) []string {
	dir, base := filepath.Split(cachePath)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	type found struct {
		path string
		mod  time.Time
	}
	var fs []found
	for _, e := range ents {
		name := e.Name()
		tmp := strings.HasPrefix(name, base+journalTmpInfix)
		if !tmp && !strings.HasPrefix(name, base+journalInfix) {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if tmp && time.Since(info.ModTime()) < staleTmpJournal {
			continue
		}
		fs = append(fs, found{filepath.Join(dir, name), info.ModTime()})
	}
	slices.SortFunc(fs, func(a, b found) int { return a.mod.Compare(b.mod) })
	paths := make([]string, len(fs))
	for i, f := range fs {
		paths[i] = f.path
	}
	return paths
}

// readFinished opens read-only the journals whose process has closed them
// (or died), newest first, as the others, so that lookups see what those
// processes learned although it could not be merged into the main file
// yet. While open here they cannot be merged: that waits until this cache
// closes.
func (js *journals) readFinished() {
	var others []*journal
	for _, p := range journalPaths(js.path) {
		o := openDB(p, Options{ReadOnly: true, LockTimeout: time.Nanosecond})
		if o.err != nil || o.openErr != nil {
			o.release()
			continue // still written, being merged, or unreadable
		}
		others = append(others, &journal{db: o.db, path: p})
	}
	slices.Reverse(others)
	js.others = others
}

// closeOthers closes the finished journals this cache reads.
func (js *journals) closeOthers() {
	for _, j := range js.others {
		j.close(false)
	}
	js.others = nil
}

// reading returns the journals to read, newest first: this process's own,
// then the others'.
func (js *journals) reading() []*journal {
	if js.own == nil {
		return js.others
	}
	return append([]*journal{js.own}, js.others...)
}

// ownJournal returns this process's journal, creating it first where there
// is none.
func (js *journals) ownJournal() (*journal, error) {
	if js.own == nil {
		j, err := js.create()
		if err != nil {
			return nil, err
		}
		js.own = j
	}
	return js.own, nil
}

// closeOwn closes this process's journal, if it has one left unmerged.
func (js *journals) closeOwn() {
	if js.own != nil {
		js.own.close(false)
		js.own = nil
	}
}

// unmerged reports whether there may be journals to merge: this
// process's own, or any next to the main file.
func (js *journals) unmerged() bool {
	return js.own != nil || len(journalPaths(js.path)) > 0
}

// mergeBudget is the most journal entries merged while the main file is
// held alone once: a merge writes as much as the commits of the entries
// did, about 150 bytes an entry, and another process that wants the file
// meanwhile waits for it. A variable so that tests can make it small.
var mergeBudget = 50_000

// mergePause is how long Close lets the main file go between two parts of
// a long merge: longer than bbolt's 50 ms between two tries of a lock, so
// that a process waiting for the file gets it in between (and the merge
// stops there, for a later process to go on with).
var mergePause = 60 * time.Millisecond

// merging is what one commit merged of one journal.
type merging struct {
	j              *journal
	files, deleted [][]byte // keys merged, when not all of them were
	done           bool     // all of it: the journal is removed
}

// commitAlone writes to the main file, which this process has open alone
// as db, in one transaction: the finished journals of other processes,
// this process's own journal, then batch, at most mergeBudget journal
// entries in all. The journals merged whole are removed once that is
// committed; from the others, the entries merged. An entry from a journal
// replaces one in the main file only if it was hashed no earlier, and a
// removal removes only an entry hashed before it: two processes that
// learned of a file in turn leave the later one's entry, whichever merges
// first. While this process's own journal is not merged whole, batch is
// appended to it instead, after what it holds. more reports that journal
// entries were left for another time.
func (js *journals) commitAlone(db *bolt.DB, batch []op) (more bool, err error) {
	taken := js.take()
	all := taken
	if js.own != nil {
		all = append(all, js.own)
	}
	var ms []merging
	toMain := batch
	err = protectErr(func() error {
		return db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketFiles)
			if b == nil {
				return errNoBucket
			}
			b.FillPercent = fillPercent
			var err error
			if ms, err = mergeJournals(b, all); err != nil {
				return err
			}
			if js.own != nil && !ms[len(ms)-1].done {
				toMain = nil
			}
			return applyOps(b, toMain)
		})
	})
	if err != nil {
		for _, j := range taken {
			j.close(false)
		}
		return false, err
	}
	more = js.finishMerges(ms)
	if len(batch) > 0 && toMain == nil {
		return more, js.own.write(batch)
	}
	return more, nil
}

// take opens the journals of other processes that are finished: those no
// process holds any more. A journal this process has alone but cannot read
// is removed.
func (js *journals) take() []*journal {
	var taken []*journal
	for _, p := range journalPaths(js.path) {
		if js.own != nil && p == js.own.path {
			continue
		}
		o := openDB(p, Options{LockTimeout: time.Nanosecond})
		switch {
		case errors.Is(o.err, berrors.ErrTimeout), o.openErr != nil:
			continue // its process still writes it, or another reads it
		case o.err != nil:
			_ = os.Remove(p) // had alone and unreadable: of no use to anyone
			continue
		}
		taken = append(taken, &journal{db: o.db, path: p})
	}
	return taken
}

// mergeJournals merges the journals js, in turn, into the files bucket b,
// at most mergeBudget entries in all, and says what it merged of each.
func mergeJournals(b *bolt.Bucket, js []*journal) ([]merging, error) {
	budget := mergeBudget
	var ms []merging
	for _, j := range js {
		m, err := mergeJournal(b, j, &budget)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// applyOps puts and deletes ops in the files bucket b.
func applyOps(b *bolt.Bucket, ops []op) error {
	for _, o := range ops {
		var err error
		if o.del {
			err = b.Delete([]byte(o.key))
		} else {
			err = b.Put([]byte(o.key), o.val)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// finishMerges, once the merges ms are committed, removes the journals
// merged whole and forgets from the others what was merged of them,
// closing those but this process's own. It reports whether journal
// entries were left for another time.
func (js *journals) finishMerges(ms []merging) (more bool) {
	for _, m := range ms {
		if m.done {
			m.j.close(true)
			if m.j == js.own {
				js.own = nil
			}
			js.merged.Add(1)
			continue
		}
		// Where forgetting fails, the entries are merged again by a
		// later process (a merge keeps the entry hashed last); this one
		// goes on with the journal no further.
		if m.j.forget(m.files, m.deleted) == nil {
			more = true
		}
		if m.j != js.own {
			m.j.close(false)
		}
	}
	return more
}

// mergeJournal applies to the files bucket b what journal j holds, at most
// *budget entries of it, and takes those from *budget.
func mergeJournal(b *bolt.Bucket, j *journal, budget *int) (m merging, err error) {
	m.j = j
	err = j.db.View(func(tx *bolt.Tx) error {
		v, ok := journalView(tx)
		if !ok {
			m.done = true // not a journal of this fastcopy: nothing to take
			return nil
		}
		cur := v.files.Cursor()
		k, val := cur.First()
		for ; k != nil && *budget > 0; k, val = cur.Next() {
			*budget--
			// The journal's pages are gone when its transaction ends,
			// before b's commits.
			k = bytes.Clone(k)
			m.files = append(m.files, k)
			e, ok := decodeValue(string(k), val)
			if !ok {
				continue
			}
			if old, ok := decodeValue(string(k), b.Get(k)); ok && old.HashedAt > e.HashedAt {
				continue
			}
			if err := b.Put(k, bytes.Clone(val)); err != nil {
				return err
			}
		}
		if k != nil {
			return nil
		}
		dcur := v.deleted.Cursor()
		k, t := dcur.First()
		for ; k != nil && *budget > 0; k, t = dcur.Next() {
			*budget--
			k = bytes.Clone(k)
			m.deleted = append(m.deleted, k)
			if len(t) != 8 {
				continue
			}
			at := int64(binary.BigEndian.Uint64(t))
			if old, ok := decodeValue(string(k), b.Get(k)); ok && old.HashedAt > at {
				continue
			}
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		m.done = k == nil
		return nil
	})
	if m.done {
		m.files, m.deleted = nil, nil
	}
	return m, err
}

// forget removes from the journal the entries a commit merged.
func (j *journal) forget(files, deleted [][]byte) error {
	return protectErr(func() error {
		return j.db.Update(func(tx *bolt.Tx) error {
			v, ok := journalView(tx)
			if !ok {
				return errNoBucket
			}
			for _, k := range files {
				if err := v.files.Delete(k); err != nil {
					return err
				}
			}
			for _, k := range deleted {
				if err := v.deleted.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// protectErr is protect for a function that returns an error.
func protectErr(fn func() error) error {
	var err error
	if perr := protect(func() { err = fn() }); perr != nil {
		return perr
	}
	return err
}
