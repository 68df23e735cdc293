package hashcache

import (
	"errors"

	"github.com/fastcopy/fastcopy/internal/fileio"
	"github.com/fastcopy/fastcopy/internal/refusal"
)

// ErrLocked is returned (wrapped) by Open when another process holds the
// cache file alone for longer than the lock timeout: a fastcopy from before
// caches were shared, or one stopped in the middle of a commit or a merge
// (processes that share the cache never wait for each other otherwise).
// fastcopy stops on it, before writing anything, with exit status 5. It is
// fileio.ErrLocked, the one sentinel for a lock another process holds (a
// destination's too: copyengine.ErrLocked).
var ErrLocked = fileio.ErrLocked

// errCacheLocked is ErrLocked in the words the cache's messages use.
var errCacheLocked error = refusal.Locked("hash cache is in use by another fastcopy that holds it alone (an older fastcopy, or one stopped while it commits)")

// ErrCorrupt wraps the warnings (Cache.Warnings) about a cache file that could
// not be read: garbage, truncated, the wrong format, or a page that made the
// database code fail while in use. A writable cache moves such a file aside
// to PATH.corrupt-<unix time> and starts a new one; a read-only cache just
// ignores it.
var ErrCorrupt = errors.New("hash cache unreadable")

// ErrNewerSchema wraps the warning about a cache written by a newer fastcopy
// whose layout this one does not know. Such a cache is left alone and not
// used for the run: no lookups, no writes.
var ErrNewerSchema = errors.New("hash cache written by a newer fastcopy")

// ErrReadOnly is returned by Flush and Close after Put or Delete was called
// on a cache opened with Options.ReadOnly; nothing was written.
var ErrReadOnly = errors.New("hash cache opened read-only")

// ErrClosed is returned by Flush, Close, Stats and Prune on a closed cache.
var ErrClosed = errors.New("hash cache is closed")
