package copyengine

import "github.com/fastcopy/fastcopy/internal/fileio"

// hooks are what a test can set for one run (export_test.go; the faults
// also through WithFaults, in builds with the tag fcfault). The zero value,
// which every other run has, changes nothing.
type hooks struct {
	// faults are injected into the file operations of the run's roots and
	// of everything opened from them (fileio.OpenDirFaults).
	faults *fileio.FaultSet
	// stageMaxFiles and stageMaxBytes, when positive, replace the bounds
	// of a directory kept staged (defaultStageMaxFiles, defaultStageMaxBytes).
	stageMaxFiles int
	stageMaxBytes int64
	// resumeMin, when positive, replaces defaultResumeMin.
	resumeMin int64
}

// openRoot opens a root of the run (a source's directory, the
// destination), carrying the run's faults to what is opened from it.
func (o *Options) openRoot(path string) (*fileio.Dir, error) {
	return fileio.OpenDirFaults(path, o.hooks.faults)
}

// stageLimits are the most files and bytes a directory kept staged holds.
func (h *hooks) stageLimits() (files int, bytes int64) {
	files, bytes = defaultStageMaxFiles, defaultStageMaxBytes
	if h.stageMaxFiles > 0 {
		files = h.stageMaxFiles
	}
	if h.stageMaxBytes > 0 {
		bytes = h.stageMaxBytes
	}
	return files, bytes
}

// resumeMinSize is the size from which an interrupted copy's temporary is kept.
func (h *hooks) resumeMinSize() int64 {
	if h.resumeMin > 0 {
		return h.resumeMin
	}
	return defaultResumeMin
}
