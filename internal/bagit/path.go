package bagit

import (
	"fmt"
	"path"
	"strings"
)

// A manifest's path escapes CR and LF (RFC 8493 section 2.1.3); the RFC
// escapes '%' too, which bagit-python (and so fastcopy's writer, to be
// read by it) does not.
var (
	unescapeLines   = strings.NewReplacer("%0A", "\n", "%0a", "\n", "%0D", "\r", "%0d", "\r")
	unescapeLinesPc = strings.NewReplacer("%0A", "\n", "%0a", "\n", "%0D", "\r", "%0d", "\r", "%25", "%")
)

// unescapePath undoes a manifest path's escapes: CR and LF, and with pct
// '%' as well.
func unescapePath(s string, pct bool) string {
	if pct {
		return unescapeLinesPc.Replace(s)
	}
	return unescapeLines.Replace(s)
}

// cleanInBag is p without a leading "./", refused when it would leave the
// bag or is not clean.
func cleanInBag(p string) (string, error) {
	p = strings.TrimPrefix(p, "./")
	if p == "" || strings.HasPrefix(p, "/") || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") {
		return "", fmt.Errorf("path %q is not a clean path inside the bag", p)
	}
	return p, nil
}
