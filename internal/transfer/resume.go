package transfer

import (
	"bytes"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/throttle"
)

// A large file whose copy is interrupted (Ctrl-C, a fatal error, a kill, a
// drive pulled out, a power cut) keeps its temporary, and the next run
// takes up the copy where the temporary stops matching the source instead
// of writing it all again.
//
// Nothing of the temporary is trusted. The next run reads the source from
// its first byte, as always (each byte once: the digest the read-back is
// checked against is still of the whole source), and compares each piece
// it reads with the same range of the temporary, byte for byte. While they
// are equal nothing is written; from the first piece that differs (a torn
// tail after a power cut, a byte flipped, a source that changed since),
// or that the temporary does not reach, every byte is written as usual.
// The finished file is then flushed and read back whole, from the device,
// like any other: a temporary changed by someone else, before or during
// the run, fails that check like a bad write would.
//
// A temporary is only taken up when it is the temporary of a source file
// of the same directory, a regular file, not a hard link (one link), owned
// by the user running the copy, and opened without following a symlink;
// anything else in its place is removed (the name, never what a symlink
// points to) and the file written afresh.
//
// What a kept temporary costs is the space it holds until the next run
// (or its removal: it is a hidden file named ".NAME.fastcopy-tmp").

// Resume says which interrupted copies keep their temporary for the next
// run to take up.
type Resume struct {
	Off bool  // --no-resume: none is kept or taken up
	Min int64 // the size from which a file's temporary is kept
}

// Resumable reports whether the copy of a file like st keeps its temporary
// when interrupted and takes up one left by an earlier run: a large file,
// not sparse (the holes of a sparse copy are never written, so that the
// temporary's bytes there would be trusted unread). A file that is cloned
// after all is cloned whole over what the temporary held.
func (r Resume) Resumable(st *fileio.Stat) bool {
	return !r.Off && st.IsRegular() && st.Size >= r.Min && !st.Sparse()
}

// resumer compares the pieces of a source being copied with a temporary
// left by an earlier run, for as long as they match.
type resumer struct {
	f     *fileio.File
	limit int64 // the temporary's size when opened (at most the source's)
	at    int64 // bytes found equal so far: the copy is resumed at at
	buf   []byte
	done  bool // a piece differed: everything from at on is written
}

// openResume opens the job's temporary, left by an earlier run, to take up
// the copy, or returns nil when it is not one to take up (see the comment
// above). The caller then creates a fresh temporary, removing what is in
// the way.
func (t *Transfer) openResume() *resumer {
	st := t.st
	f, err := fileio.OpenTemp(t.job.Dir, t.job.Tmp)
	if err != nil {
		return nil // none, a symlink (ELOOP), or not ours to write
	}
	cur, err := f.Stat()
	if err != nil || !cur.IsRegular() || cur.Nlink != 1 || !fileio.OwnedBy(&cur, t.cfg.Euid) || cur.Size == 0 || !bareTemp(f) {
		f.Close()
		return nil
	}
	if cur.Mode&0o7777 != 0o600 {
		// Private again until its data is complete, as a new temporary is
		// (meta.Config.CreateMode): one kept whole had its final mode,
		// setuid perhaps, and is about to be written to. finish sets the
		// mode after.
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return nil
		}
	}
	limit := cur.Size
	if limit > st.Size {
		// Longer than the source: the end cannot be the copy's. Cut it
		// off, so that the finished file has the source's length.
		if err := f.Truncate(st.Size); err != nil {
			f.Close()
			return nil
		}
		limit = st.Size
	}
	return &resumer{f: f, limit: limit}
}

// bareTemp reports whether the temporary f carries no extended attribute
// (an ACL is one) but the security label the system gives every new file.
// The copy only adds the source's attributes to what the file holds, so
// one left from an earlier run (the source's ACL then, or anyone's since)
// would stay on the finished file. A temporary that has any is not taken
// up but written afresh: removing them one by one instead could stop
// halfway, and would trust names listed by whoever could set them.
func bareTemp(f *fileio.File) bool {
	xs, err := fileio.Xattrs(f)
	if err != nil {
		return false
	}
	for name := range xs {
		if name != "security.selinux" && name != "security.SMACK64" {
			return false
		}
	}
	return true
}

// same reports whether the temporary already holds p at off, the next piece
// read from the source: then it need not be written. Once a piece differs,
// or leaves the part of the temporary known, every later one is written.
func (r *resumer) same(c *Config, p []byte, off int64) bool {
	if r == nil || r.done {
		return false
	}
	end := off + int64(len(p))
	if off != r.at || end > r.limit {
		r.done = true
		return false
	}
	if cap(r.buf) < len(p) {
		r.buf = make([]byte, len(p))
	}
	n, err := r.f.ReadFull(r.buf[:len(p)], off)
	c.Stats.BytesRead.Add(int64(n))
	if cerr := c.charge(throttle.Read, int64(n)); cerr != nil {
		r.done = true
		return false // the write that follows stops on the cancel
	}
	if err != nil || n != len(p) || !bytes.Equal(r.buf[:n], p) {
		r.done = true
		return false
	}
	r.at = end
	return true
}

// resumedAt is where the copy was taken up: the length of the temporary's
// prefix kept.
func (r *resumer) resumedAt() int64 {
	if r == nil {
		return 0
	}
	return r.at
}
