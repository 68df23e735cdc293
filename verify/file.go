package verify

import (
	"github.com/fastcopy/fastcopy/copyengine/fileio"
)

// BufSize is the size of the read buffers the package expects: large enough
// that most files are hashed in one call.
const BufSize = 1 << 20

// Sink receives each run of data Stream reads, with its offset in the file,
// before the next read reuses the buffer.
type Sink func(p []byte, off int64) error

// HashFile returns the digest and length of f's whole logical content. It
// reads size bytes, or to the end of the file when size is 0 (files such as
// procfs ones report 0 yet hold data); a file that grew past size is caught
// by the caller's stat. With sparse set, holes are hashed as zeros without
// being read. buf is scratch space.
func HashFile(f *fileio.File, size int64, sparse bool, buf []byte) (Sum, int64, error) {
	return Stream(f, size, sparse, buf, nil)
}

// Stream is HashFile that also hands every data run to sink (when not nil):
// the copy loop, reading each source byte once. Holes of a sparse file are
// not passed to sink; the caller sizes the destination so that they stay
// holes.
func Stream(f *fileio.File, size int64, sparse bool, buf []byte, sink Sink) (Sum, int64, error) {
	if sparse && size > 0 {
		sum, n, err := streamSparse(f, size, buf, sink)
		if err == nil || !fileio.IsFallback(err) {
			return sum, n, err
		}
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

// streamRange hashes (and sinks) f from off to end, or to its end of file
// when end is 0.
func streamRange(f *fileio.File, h *Hasher, off, end int64, buf []byte, sink Sink) (Sum, int64, error) {
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

func streamSparse(f *fileio.File, size int64, buf []byte, sink Sink) (Sum, int64, error) {
	h := NewHasher()
	var pos int64
	for pos < size {
		data, hole, err := f.NextData(pos, size)
		if err != nil {
			return Sum{}, 0, err
		}
		h.WriteZeros(data - pos)
		if data >= size {
			break
		}
		_, n, err := streamRange(f, h, data, hole, buf, sink)
		if err != nil {
			return Sum{}, 0, err
		}
		if n < hole {
			return h.Sum(), n, nil // shrank while read: the caller sees the length
		}
		pos = hole
	}
	return h.Sum(), size, nil
}
