// Package destfs is what fastcopy knows of the filesystems it writes to:
// what a destination can hold and keep, learned from the destination
// itself, and how fastcopy names what it writes there.
//
// It owns:
//
//   - the temporary-name scheme (tempname.go): the one place that says
//     what a file, a staged directory or a probe is called while it is not
//     in place (".NAME.fastcopy-tmp", its digest form, the alternatives
//     when a source name takes one), and how a run recognises one
//     (IsTempName); only internal/fileio, which this package builds on,
//     spells the suffix on its own (publish.go, the Darwin clone);
//   - names a destination cannot hold (names.go, namerules.go): the rules
//     of Windows' names, printable ASCII, UTF-16, learned per filesystem by
//     creating names and reading the directory back (NameRulesOf); the
//     --names modes and the look-alike encoding (EncodeName, DecodeName);
//     a name that breaks a rule is a NameError;
//   - case folding (fold.go): whether a destination directory folds case or
//     Unicode normalisation, asked of the destination (FoldOf; a dry run
//     tells it from the listing and the filesystem, writing nothing), which
//     source names are one name there (PlanFold), and what an entry held
//     under another spelling is found to be (Respelled); CollisionError
//     and the filesystem it names (FSTypeOf);
//   - the destination's capabilities (caps.go, devinfo.go): hard links,
//     the largest file, what metadata it cannot keep (CannotKeep, NotKept;
//     symlinks, for a dry run, by the type: SymlinksLostByType),
//     per filesystem the volume identity and the resolution of the times it
//     stores;
//   - the directory-rename probe (renameprobe.go): whether staging a
//     directory is safe there (DirRenameKeeps).
//   - the dry run's view of DEST (dryview.go): what the probes and tries
//     of the real run would find, told from the filesystem's type, a
//     listing and where DEST would be made (DryDest, DryClones, DryFold,
//     DryStage, SymlinksLostByType).
//
// Its guarantees: every probe writes only under a temporary's name and
// removes what it made, putting back the times of the directory it
// probed in (KeepDirTimes), so a directory that was up to date stays so;
// a dry run (Config.SkipWrite) writes nothing and goes by the filesystem's
// type; each fact is learned once per filesystem (st_dev) and run.
//
// Its input is Config, given to Info.Start: DEST as given and opened, the
// dry run, whether the run may set any owner, and the record of what runs
// made, in which a probe in DEST's root is named first. It imports nothing
// of copyengine, and returns facts and errors (NameError and
// CollisionError, re-exported by copyengine by alias): the caller
// (copyengine/destfs.go) emits the notes and counts.
package destfs
