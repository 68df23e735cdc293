package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// removeWorkers is how many unlinks removeTree keeps in flight.
const removeWorkers = 32

// removeTree removes dir and everything below it, like os.RemoveAll, with
// many unlinks in flight. On a filesystem mounted with online discard and
// no journal (this machine's root), every unlink that frees blocks waits
// for the device to discard them: rm -rf of the 50,000-file source tree
// takes about 10 s, nearly all of it waiting, and it ran before every
// timed run. Parallel unlinks overlap those waits.
func removeTree(dir string) error {
	var files []string
	dirs := map[int][]string{} // by depth, to remove the deepest first
	maxDepth := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			depth := strings.Count(p, string(filepath.Separator))
			dirs[depth] = append(dirs[depth], p)
			maxDepth = max(maxDepth, depth)
			return nil
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		return err
	}
	if err := removeAll(files, os.Remove); err != nil {
		return err
	}
	for depth := maxDepth; depth >= 0; depth-- {
		if err := removeAll(dirs[depth], os.Remove); err != nil {
			return err
		}
	}
	return nil
}

// removeAll applies remove to every path with removeWorkers in parallel and
// returns the first error other than "does not exist".
func removeAll(paths []string, remove func(string) error) error {
	ch := make(chan string)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for w := 0; w < removeWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range ch {
				if err := remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, p := range paths {
		ch <- p
	}
	close(ch)
	wg.Wait()
	return first
}
