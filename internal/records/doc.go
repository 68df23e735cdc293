// Package records keeps a run's records: it checks what they are asked
// for, collects over the run the files they list, and writes them once
// the copy is in place: a manifest (xxhsum or coreutils lines), the next
// generation of DEST's ASC MHL history (through internal/mhl), a BagIt
// bag's tag files (through internal/bagit). It also computes, in the
// same pass over each source's bytes as the copy's own xxh128, the
// digests in the other formats the records ask for (Hashes), and tells
// the audit log (--log) when what the run reported is durable (Flushes).
//
// Its input is data. Options are the records' options as given: Check
// refuses (refusal.Error) what they cannot hold and makes DEST a bag's
// payload folder, CheckPlan refuses a manifest inside DEST and a plan
// with no folder for the history, PrepareBag makes the bag's folders.
// Keeper, made by New from a Config (the Options, the buffers it may
// borrow, DEST as the run holds it, the directories of the run, where
// it answers), listens to the run's one outcome hub (Listen: each
// outcome Listed goes into a Set, a path listed twice counting with its
// last) and is called at the end of the run: WriteManifest,
// WriteMHL and WriteBag, which the engine calls after its final flush
// (the manifest before it), NoteStopped for a run that stopped, and Err.
// Each writer also exists alone, with a struct of data that is its whole
// input: Manifest, MHL, Bag.
//
// It never decides what a run copies and imports nothing of copyengine.
// A dry run (Config.SkipWrite) writes no record and never tells OnFlush.
// A writer's facts go to the summary (Config.Count), the files it could
// not list fail by name (Config.Failed), and a record not written is
// kept as an *MHLError or a *BagError for Err.
package records
