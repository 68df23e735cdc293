package copyengine

// WithStageLimits returns opt with the most files and bytes a new
// directory may hold and still be kept staged lowered to files and bytes,
// for its run alone.
func WithStageLimits(opt Options, files int, bytes int64) Options {
	opt.hooks.stageMaxFiles, opt.hooks.stageMaxBytes = files, bytes
	return opt
}

// WindowsRule returns the rule of Windows' names that name breaks, "" when
// none.
var WindowsRule = windowsRule

// WithResumeMin returns opt with the size from which an interrupted copy's
// temporary is kept and taken up lowered to n, for its run alone.
func WithResumeMin(opt Options, n int64) Options {
	opt.hooks.resumeMin = n
	return opt
}
