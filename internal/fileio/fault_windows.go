package fileio

// The handles of this platform (fileio_windows.go) carry no fault set:
// their operations call these, which inject nothing, in every build.

func inject(Op, string) error { return nil }

func injectWrite(_ string, p []byte) ([]byte, error) { return p, nil }

func (d *Dir) faultSet() faults { return faults{} }

// OpenDirFaults is OpenDir: no fault reaches this platform's handles.
func OpenDirFaults(path string, _ *FaultSet) (*Dir, error) { return OpenDir(path) }
