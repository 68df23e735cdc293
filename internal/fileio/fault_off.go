//go:build !fcfault

package fileio

// FaultsEnabled reports whether this build can inject faults (tag fcfault).
const FaultsEnabled = false

func inject(Op, string) error { return nil }

func injectWrite(_ string, p []byte) ([]byte, error) { return p, nil }
