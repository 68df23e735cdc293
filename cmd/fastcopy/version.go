package main

import (
	"runtime"
	"runtime/debug"
)

// version describes the build: the module version, the commit it was built
// from (with "+modified" when the tree had uncommitted changes) and the Go
// release, as 'fastcopy --version' prints it.
func version() string {
	v := "(devel)"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v + " " + runtime.Version()
	}
	if bi.Main.Version != "" {
		v = bi.Main.Version
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+modified"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += " " + rev + modified
	}
	return v + " " + bi.GoVersion
}
