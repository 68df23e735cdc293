package verify

import (
	"bytes"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// BufSize is the size of the read buffers the package expects: large enough
// that most files are hashed in one call.
const BufSize = 1 << 20

// Source is what HashFile and Stream read: a *fileio.File, or a reader
// that hands on the bytes another reader of the same file read (a copy to
// several destinations reads each source byte once).
type Source interface {
	// ReadFull reads into buf from off until buf is full or the file
	// ends, and returns the bytes read.
	ReadFull(buf []byte, off int64) (int, error)
	// AdviseSequential tells the kernel the file is read from start to end.
	AdviseSequential()
}

var _ Source = (*fileio.File)(nil)

// Sink receives each run of data Stream reads, with its offset in the file,
// before the next read reuses the buffer.
type Sink func(p []byte, off int64) error

// HashFile returns the digest and length of f's whole logical content. It
// reads size bytes, or to the end of the file when size is 0 (files such as
// procfs ones report 0 yet hold data); a file that grew past size is caught
// by the caller's stat. buf is scratch space.
//
// Every byte is read with read(2), holes too (they read as zeros): the
// digest never rests on the filesystem's map of holes (SEEK_DATA and
// SEEK_HOLE, FIEMAP), which filesystems have got wrong (OpenZFS #15526),
// so that a map that hides data cannot make a source and a zero-filled
// copy hash alike. sparse changes nothing here; see Stream.
func HashFile(f Source, size int64, sparse bool, buf []byte) (Sum, int64, error) {
	return Stream(f, size, sparse, buf, nil)
}

// Stream is HashFile that also hands the data it reads to sink (when not
// nil): the copy loop, reading each source byte once. With sparse set,
// blocks of zeros (zeroBlock bytes, aligned in the file) are hashed but not
// handed to sink: the caller sizes the destination first, so that they
// stay (or become) holes. Which blocks are zeros is learnt from the bytes
// read, never from the hole map.
func Stream(f Source, size int64, sparse bool, buf []byte, sink Sink) (Sum, int64, error) {
	if sparse && sink != nil {
		sink = SkipZeros(sink)
	}
	if size > 0 && size <= int64(len(buf)) {
		// The common small file: one read, one one-shot hash.
		n, err := f.ReadFull(buf[:size], 0)
		if err != nil {
			return Sum{}, 0, err
		}
		if sink != nil {
			if err := sink(buf[:n], 0); err != nil {
				return Sum{}, 0, err
			}
		}
		return Bytes(buf[:n]), int64(n), nil
	}
	if size > int64(len(buf)) {
		f.AdviseSequential()
	}
	return streamRange(f, NewHasher(), 0, size, buf, sink)
}

// zeroBlock is the granularity at which Stream leaves zeros out of a sparse
// file's sink: the block size of most filesystems, and a divisor of
// BufSize, so that blocks stay aligned in the file across reads.
const zeroBlock = 4096

// SkipZeros wraps sink so that it receives only the runs of p made of
// blocks that are not all zeros, as Stream does for a sparse file: a
// caller that must see every byte read (to count it) passes sparse false
// to Stream and wraps its own sink in this.
func SkipZeros(sink Sink) Sink {
	return func(p []byte, off int64) error {
		start := -1 // of the data run being gathered
		for i := 0; i < len(p); i += zeroBlock {
			end := min(i+zeroBlock, len(p))
			if bytes.Equal(p[i:end], zeros[:end-i]) {
				if start >= 0 {
					if err := sink(p[start:i], off+int64(start)); err != nil {
						return err
					}
					start = -1
				}
				continue
			}
			if start < 0 {
				start = i
			}
		}
		if start >= 0 {
			return sink(p[start:], off+int64(start))
		}
		return nil
	}
}

// streamRange hashes (and sinks) f from off to end, or to its end of file
// when end is 0.
func streamRange(f Source, h *Hasher, off, end int64, buf []byte, sink Sink) (Sum, int64, error) {
	for end == 0 || off < end {
		want := int64(len(buf))
		if end > 0 && end-off < want {
			want = end - off
		}
		n, err := f.ReadFull(buf[:want], off)
		if err != nil {
			return Sum{}, 0, err
		}
		if n == 0 {
			break
		}
		h.Write(buf[:n])
		if sink != nil {
			if err := sink(buf[:n], off); err != nil {
				return Sum{}, 0, err
			}
		}
		off += int64(n)
		if int64(n) < want {
			break
		}
	}
	return h.Sum(), off, nil
}
