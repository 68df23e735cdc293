// Package mhl writes and reads ASC MHL v2.0 histories (the American Society
// of Cinematographers' Media Hash List): the chain of custody of a folder of
// media, kept in the folder's ascmhl subfolder as one generation file per
// run (NNNN_<folder>_<YYYY-MM-DD>_<HHMMSS>Z.mhl) and ascmhl_chain.xml, which
// lists each generation with the C4 ID of its bytes.
//
// Its contract:
//
//   - WriteGeneration appends a generation: it never changes an earlier
//     generation file, numbers on from the highest one in the folder, and
//     refuses to extend a history that does not match its chain. It hashes
//     no file: the caller hands over the xxh128 digests it computed while
//     reading (and reading back) each file; the directory content and
//     structure hashes are computed from those as the specification
//     defines them. Each file is written under a temporary name, flushed,
//     renamed into place and its folder flushed, the generation before the
//     chain that names it.
//   - Load reads a folder's history and the histories nested below it and
//     checks them before anything else is believed: every generation a
//     chain lists must be present with the C4 ID recorded, and every
//     generation a parent references must match the reference. Otherwise
//     it returns a *ChainError (errors.Is ErrTampered).
//   - Expected turns a history into the list of files the folder must hold
//     (with the xxh128 first recorded for each) and the ignore patterns
//     that say which files are not the history's business; comparing the
//     folder against it is the caller's (internal/treeverify's) work.
//   - Written XML is fixed byte for byte for the same input and valid
//     against the specification's schemas (ASCMHL.xsd,
//     ASCMHLDirectory.xsd). Digests written are xxh128 only; digests read
//     may be of any format of the specification, but only xxh128 ones can
//     be checked.
//
// It imports verify and internal/fileio of the project.
package mhl
