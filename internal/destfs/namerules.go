package destfs

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/fastcopy/fastcopy/internal/fileio"
)

// NameRulesOf returns the name rules of the filesystem holding the
// destination directory d, learning them the first time the run meets that
// filesystem (a mount point inside DEST gets its own); nil when it forbids
// nothing fastcopy knows of.
func (fi *Info) NameRulesOf(d *fileio.Dir) *NameRules {
	if d == nil {
		return nil
	}
	st, err := d.Stat()
	if err != nil {
		return nil
	}
	di := fi.devs.get(st.Dev)
	di.namesOnce.Do(func() {
		// On DEST's own filesystem the probe runs in DEST's root, whichever
		// directory asks first, so that a rerun touches no other directory.
		if fi.cfg.Root != nil && st.Dev == fi.rootDev {
			d = fi.cfg.Root
		}
		di.names = fi.learnNameRules(d)
	})
	return di.names
}

// learnNameRules finds out which names the filesystem of d refuses, by
// creating names there and reading the directory back: a FUSE driver may
// take a name and store another. A filesystem that refuses a ':' gets
// Windows' rules in full (FAT, exFAT, NTFS mounted with windows_names):
// exfat-fuse stores "CON" and "a.", but Windows opens neither, and such a
// drive is made to go there. One that refuses a look-alike as well takes
// only ASCII (fusefat). One that takes ':' but refuses a byte that is not
// UTF-8 stores UTF-16 names (NTFS through ntfs-3g without windows_names).
// A dry run writes nothing, so it goes by the filesystem's type: FAT and
// exFAT have Windows' rules, NTFS only where it was mounted so.
func (fi *Info) learnNameRules(d *fileio.Dir) *NameRules {
	fs := fileio.FSName(d.Path())
	byType := func() *NameRules {
		switch fs {
		case "FAT", "FAT32", "exFAT":
			return &NameRules{fs: fs, windows: true}
		}
		return nil
	}
	if fi.cfg.dry() {
		return byType()
	}
	refused, ok := probeName(d, ":")
	if !ok {
		return byType() // the probe could not tell (read-only, full, no permission)
	}
	if fs == "" {
		fs = "the destination's filesystem"
	}
	if !refused {
		// Names in UTF-16 (NTFS without windows_names) take every
		// character but no byte that is not UTF-8.
		if refused, ok := probeName(d, "\xff"); ok && refused {
			return &NameRules{fs: fs, utf8: true}
		}
		return nil
	}
	if fs == "NTFS" {
		fs = "NTFS mounted with windows_names"
	}
	r := &NameRules{fs: fs, windows: true}
	if refused, ok := probeName(d, string(rune(':'+fullOffset))); ok && refused {
		r.ascii = true
	}
	return r
}

// probeName creates a file whose name holds s in d, reads the directory
// back and removes what it made. refused is true when the name was refused
// or stored as another; ok is false when the probe could not tell (the
// create failed for another reason). The name is a temporary's, so one
// left behind by a crash is removed by the next run.
func probeName(d *fileio.Dir, s string) (refused, ok bool) {
	defer KeepDirTimes(d)()
	tag := fmt.Sprintf("fastcopy-probe-%016x", rand.Uint64())
	name := "." + tag + s + TempSuffix
	f, err := fileio.CreateTemp(d, name)
	if err != nil {
		return true, fileio.IsBadName(err)
	}
	f.Close()
	names, err := d.ReadDir()
	if err != nil {
		_ = d.Remove(name)
		return false, false
	}
	kept := false
	for _, n := range names {
		if !strings.Contains(n.Name, tag) {
			continue
		}
		if n.Name == name {
			kept = true
		}
		_ = d.Remove(n.Name) // under whatever name it got
	}
	return !kept, true
}
