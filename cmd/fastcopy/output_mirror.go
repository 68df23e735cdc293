package main

import (
	"fmt"
	"strings"

	"github.com/fastcopy/fastcopy/copyengine"
)

// mirrorSummary adds what --delete, --backup-dir and --move did to the
// summary line, and warns once per directory whose extras were kept.
func (o *output) mirrorSummary(b *strings.Builder, s copyengine.Summary) {
	switch {
	case s.WouldDelete > 0:
		fmt.Fprintf(b, "; would delete %d", s.WouldDelete)
	case s.Deleted > 0:
		fmt.Fprintf(b, "; deleted %d", s.Deleted)
	}
	switch {
	case s.BackedUp > 0 && s.DryRun:
		fmt.Fprintf(b, "; %d old versions would be kept in --backup-dir", s.BackedUp)
	case s.BackedUp > 0:
		fmt.Fprintf(b, "; %d old versions kept in --backup-dir", s.BackedUp)
	}
	switch {
	case (s.SourcesRemoved > 0 || s.SourceDirsGone > 0) && s.DryRun:
		fmt.Fprintf(b, "; would move: %d source entries and %d emptied directories would be removed", s.SourcesRemoved, s.SourceDirsGone)
	case s.SourcesRemoved > 0 || s.SourceDirsGone > 0:
		fmt.Fprintf(b, "; moved: %d source entries and %d emptied directories removed", s.SourcesRemoved, s.SourceDirsGone)
	}
	for _, k := range s.MoveKept {
		o.warn("--move: %s", k)
	}
	for _, k := range s.DeleteKept {
		o.warn("--delete: kept what the source lacks in %s", k)
	}
}
