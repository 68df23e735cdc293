// Package pathjson holds the one rule by which fastcopy's JSON reports name
// a file whose name is not valid UTF-8: the copy's failures, verify's
// differences and the hash cache's statistics all give "path_base64"
// beside "path" by it. It imports nothing of the project.
package pathjson

import "unicode/utf8"

// Bytes is what a JSON report gives as "path_base64" beside a path: its
// exact bytes when it is not valid UTF-8 (a JSON string then shows U+FFFD
// in its place), nil otherwise, so that the field is left out.
func Bytes(path string) []byte {
	if utf8.ValidString(path) {
		return nil
	}
	return []byte(path)
}
