//go:build !fcfault

package fileio

// FaultsEnabled reports whether this build can inject faults (tag fcfault).
const FaultsEnabled = false

// FaultSet is empty without the tag fcfault: a run carries a nil one, and
// no operation looks at it.
type FaultSet struct{}

// faults is what a handle carries of its run's fault set: nothing here.
// Its methods do nothing and inline away, so that a build without the tag
// fcfault does no work for faults in any call; the field holding it is
// the first of its struct (a zero-size last field would be padded).
type faults struct{}

func faultsOf(*FaultSet) faults { return faults{} }

func (faults) inject(Op, string) error { return nil }

func (faults) injectWrite(_ string, p []byte) ([]byte, error) { return p, nil }
