package copyengine

// SetStageLimits lowers the most files and bytes a new directory may hold
// and still be kept staged, for the rest of a test; the returned function
// puts the limits back.
func SetStageLimits(files int, bytes int64) (restore func()) {
	oldFiles, oldBytes := stageMaxFiles, stageMaxBytes
	stageMaxFiles, stageMaxBytes = files, bytes
	return func() { stageMaxFiles, stageMaxBytes = oldFiles, oldBytes }
}

// WindowsRule returns the rule of Windows' names that name breaks, "" when
// none.
var WindowsRule = windowsRule

// SetResumeMin lowers the size from which an interrupted copy's temporary
// is kept and taken up, for the rest of a test.
func SetResumeMin(n int64) (restore func()) {
	old := resumeMin
	resumeMin = n
	return func() { resumeMin = old }
}

// SetReadWindowFiles lowers the most files a read window of the run with
// opt holds (disk and inode order), so that a small tree fills several.
func SetReadWindowFiles(opt *Options, n int) { opt.readWindowFiles = n }

// ReadWindowFiles is what SetReadWindowFiles set (0: the default).
func ReadWindowFiles(opt *Options) int { return opt.readWindowFiles }
