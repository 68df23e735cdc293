package durable

import (
	"github.com/fastcopy/fastcopy/internal/fileio"
)

// File is one file of a batch to make durable.
type File struct {
	Dir   *fileio.Dir // the directory it was written in
	Name  string      // its name there
	Dev   uint64      // the filesystem it is on, when DevOK
	DevOK bool
}

// Flushed is Flush's answer.
type Flushed struct {
	// Devs holds each filesystem flushed, with what its flush answered.
	Devs map[uint64]error
	// Errs holds, for each file of the batch in turn, nil when it is
	// durable, else the error that left it not known to be.
	Errs []error
}

// Flush makes a batch's data durable, in every mode: one syncfs for each
// filesystem the batch wrote in (a per-file fsync costs ~15x on many small
// files). Where a filesystem has no flush of its own that waits (or the
// file's is not known), each file on it is flushed instead, slower but as
// durable. errs, when it has room for the batch, holds the answer's Errs.
func (f *Filesystems) Flush(batch []File, errs []error) Flushed {
	flushed := map[uint64]error{}
	for i := range batch {
		b := &batch[i]
		if !b.DevOK {
			continue
		}
		if _, done := flushed[b.Dev]; done {
			continue
		}
		err := fileio.ErrUnsupported
		if d, ok := f.Dir(b.Dev); ok {
			err = fileio.Syncfs(d)
		}
		flushed[b.Dev] = err
	}
	errs = append(errs[:0], make([]error, len(batch))...)
	for i := range batch {
		b := &batch[i]
		err := fileio.ErrUnsupported
		if b.DevOK {
			err = flushed[b.Dev]
		}
		if err != nil && fileio.IsFallback(err) {
			err = SyncFile(b.Dir, b.Name)
		}
		errs[i] = err
	}
	return Flushed{Devs: flushed, Errs: errs}
}

// SyncFile flushes the file name in d to stable storage.
func SyncFile(d *fileio.Dir, name string) error {
	f, err := d.Open(name, false)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Dirs names the directories FlushAll fsyncs one by one where a
// filesystem has no syncfs that waits.
type Dirs struct {
	Root *fileio.Dir                           // the destination root
	Rels func() []string                       // the directories below it written in
	Open func(rel string) (*fileio.Dir, error) // opens one of Rels
}

// FlushAll makes the renames and directory metadata durable on every
// filesystem the run wrote in: one syncfs each, or where the platform has
// none that waits (it says so with a fallback error), an fsync of every
// directory dirs names. The files' data was flushed by Flush already.
func (f *Filesystems) FlushAll(dirs Dirs) error {
	fallback := false
	for _, d := range f.All() {
		err := fileio.Syncfs(d)
		if err != nil && fileio.IsFallback(err) {
			fallback = true
			continue
		}
		if err != nil {
			return err
		}
	}
	if !fallback {
		return nil
	}
	if err := dirs.Root.AsFile().Sync(); err != nil {
		return err
	}
	for _, rel := range dirs.Rels() {
		d, err := dirs.Open(rel)
		if err != nil {
			return err
		}
		err = d.AsFile().Sync()
		d.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
