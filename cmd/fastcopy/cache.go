package main

import (
	"errors"
	"time"

	"github.com/fastcopy/fastcopy/hashcache"
)

// cacheFlags are the hash-cache flags shared by the commands that use it.
type cacheFlags struct {
	path        string
	off         bool
	lockTimeout time.Duration
}

func (c *cacheFlags) resolve() (string, error) {
	if c.path != "" {
		return c.path, nil
	}
	return hashcache.DefaultPath()
}

// open opens the hash cache, or returns nil with --no-cache. Other
// fastcopy runs may have it open too (it is shared); one that holds it
// alone past the timeout (an older fastcopy, or one stopped while it
// commits) is an error (exit 5); an unreadable cache file is moved aside
// and rebuilt, with a warning.
func (c *cacheFlags) open(out *output, readOnly bool) (*hashcache.Cache, error) {
	if c.off {
		return nil, nil
	}
	path, err := c.resolve()
	if err != nil {
		out.warn("%v; running without a hash cache", err)
		return nil, nil
	}
	wait := c.lockTimeout
	if wait == 0 {
		wait = -1 // --cache-wait 0 waits only hashcache's grace for a commit (0 is its default)
	}
	hc, err := hashcache.Open(path, hashcache.Options{LockTimeout: wait, ReadOnly: readOnly})
	if errors.Is(err, hashcache.ErrLocked) {
		return nil, err // exit 5
	}
	if err != nil {
		out.warn("%v; running without a hash cache", err)
		return nil, nil
	}
	for _, w := range hc.Warnings() {
		out.warn("%v", w)
	}
	return hc, nil
}

// close flushes and closes the cache; a failure to save it costs the next
// run some reading, never correctness, so it is a warning.
func closeCache(out *output, hc *hashcache.Cache) {
	if hc == nil {
		return
	}
	before := len(hc.Warnings())
	if err := hc.Close(); err != nil && !errors.Is(err, hashcache.ErrReadOnly) {
		out.warn("saving the hash cache: %v", err)
	}
	// A bad page met during the run is reported (and the file set aside)
	// only now.
	for _, w := range hc.Warnings()[before:] {
		out.warn("%v", w)
	}
}

// describe names the cache a run uses, for the --log file's first line.
func (c *cacheFlags) describe(hc *hashcache.Cache) string {
	if hc == nil {
		return "off"
	}
	return hc.Path()
}
