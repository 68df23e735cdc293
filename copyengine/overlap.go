package copyengine

import "github.com/fastcopy/fastcopy/internal/preflight"

// argPath is the path p a user gave (SOURCE, DEST, a flag's value) as the
// kernel resolves it, or a refusal (preflight.ArgPath).
func argPath(p string) (string, error) { return preflight.ArgPath(p) }

// overlapInside reports whether the path a names the place the path b
// names or one inside it, by identity: through symlinks, bind mounts,
// second mounts and the case folding of filesystems whose inode numbers
// name no file (preflight.Inside). A path that cannot be resolved or
// opened is an error.
func overlapInside(a, b string) (bool, error) { return preflight.Inside(a, b) }
