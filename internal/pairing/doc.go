// Package pairing pairs the listing of one source directory with the
// listing of its destination directory: which name each source entry
// takes in the destination, and which entries cannot be copied there,
// before anything of the directory is written.
//
// Its input is Config (the source's names and which of them the filters
// and the records leave out, the destination directory's listing, nil for
// one this run makes, and how the destination directory folds names:
// destfs.FoldInfo, found by the caller) and Rules (the --names rule
// mapping a source name to one the destination can hold, and which
// destination names that look like temporaries a record shows a run
// made: internal/made).
//
// Its answer, Pair's Pairs, holds per source entry its destination name
// (mapped, and in the spelling the destination holds), why it cannot have
// one (a name the destination cannot hold, two source names that are one
// name there: Lost), whether the destination name is contested by several
// source names or held under another spelling, and the destination names
// that are temporaries' names, so that Pairs.Tmp gives every file a
// temporary that is no other entry's name. Refused says, per entry, why
// it is not copied.
//
// Its guarantee: no two copied source entries get one destination name,
// no temporary is written under a name the source or the user holds in
// the destination, and nothing is copied onto the name of the record of
// what runs made (made.Name), at any depth. It makes no system call but
// those destfs.PlanFold makes to confirm names that fold.
package pairing
