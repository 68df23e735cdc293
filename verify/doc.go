// Package verify computes the xxh128 digests that fastcopy's guarantees rest
// on: streamed over a source while it is copied, and over a written file when
// it is read back. It also reads and writes manifests in the format of
// `xxhsum -H2`, and reads checksum manifests in the other formats of
// internal/digest (ReadDigests: sha256sum, md5sum, b3sum, xxhsum -H0..-H3
// and their tagged forms).
//
// A Sum is the 128-bit XXH3 digest (github.com/zeebo/xxh3); its text form is
// the 32 hex digits xxhsum prints (high 64 bits first).
//
// It imports nothing of the project but internal/fileio, through which it
// reads, and internal/digest, which names the formats. Comparing trees by content (`fastcopy verify`) is the business of
// internal/treeverify.
package verify
