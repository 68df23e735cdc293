//go:build fcfault

package fileio

import (
	"strings"
	"sync"
	"syscall"
)

// FaultsEnabled reports whether this build can inject faults (tag fcfault).
const FaultsEnabled = true

// A Fault makes an operation fail, or corrupts the data of a write. A
// Fault takes effect only through the FaultSet it is given to (give each
// Fault to one set: its count of calls is its own).
type Fault struct {
	Op      Op            // the operation it applies to
	PathHas string        // applies only to paths containing this ("" = any)
	PathIs  string        // applies only to this exact path ("" = any)
	Nth     int           // fail the Nth matching call (1-based); 0 = every call
	Err     syscall.Errno // the error returned; 0 with Op==OpWrite and Corrupt
	Corrupt bool          // for OpWrite: flip the first byte written instead of failing
	Short   bool          // for OpWrite: write half of the buffer, then fail with Err
	Then    func()        // called each time the fault applies, before any fault takes effect
	set     *FaultSet     // the set it was given to, whose mutex guards calls
	calls   int
}

// Calls is how many calls have matched f's operation and path so far (a
// fault with no Err counts calls and changes nothing).
func (f *Fault) Calls() int {
	if f.set == nil {
		return 0
	}
	f.set.mu.Lock()
	defer f.set.mu.Unlock()
	return f.calls
}

// A FaultSet is the faults of one run under test: the root directories
// opened with OpenDirFaults carry it, and so does every Dir, File and Node
// opened from them; their operations consult it, and no other handle's do.
// It is safe for concurrent use. A nil *FaultSet injects nothing.
type FaultSet struct {
	mu     sync.Mutex
	faults []*Fault
}

// NewFaultSet returns a set of the faults fs.
func NewFaultSet(fs ...*Fault) *FaultSet {
	s := &FaultSet{faults: append([]*Fault(nil), fs...)}
	for _, f := range fs {
		f.set = s
	}
	return s
}

// faults is what a handle carries of its run's fault set.
type faults struct{ set *FaultSet }

func faultsOf(s *FaultSet) faults { return faults{set: s} }

func (h faults) inject(op Op, path string) error {
	if h.set == nil {
		return nil
	}
	return h.set.inject(op, path)
}

func (h faults) injectWrite(path string, p []byte) ([]byte, error) {
	if h.set == nil {
		return p, nil
	}
	return h.set.injectWrite(path, p)
}

// ParseFaults reads faults from a spec such as
// "write:corrupt:file3,read:EIO:bad.jpg,create:ENOSPC:#5,read:hang:big#40"
// (op:action:path, #N for the Nth call, or path#N for the Nth call on
// paths containing path). Actions: corrupt, short, hang (the call never
// returns: the process is stopped from outside mid-way, at a known point),
// or an errno name.
func ParseFaults(spec string) []*Fault {
	var out []*Fault
	for _, item := range strings.Split(spec, ",") {
		parts := strings.SplitN(item, ":", 3)
		if len(parts) < 2 {
			continue
		}
		f := &Fault{Op: Op(parts[0])}
		switch parts[1] {
		case "corrupt":
			f.Corrupt = true
		case "short":
			f.Short, f.Err = true, syscall.ENOSPC
		case "hang":
			f.Then = func() { select {} }
		default:
			f.Err = errnoByName(parts[1])
		}
		if len(parts) == 3 {
			path, nth, numbered := strings.Cut(parts[2], "#")
			f.PathHas = path
			if numbered {
				n := 0
				for _, c := range nth {
					n = n*10 + int(c-'0')
				}
				f.Nth = n
			}
		}
		out = append(out, f)
	}
	return out
}

func errnoByName(name string) syscall.Errno {
	switch name {
	case "ENOSPC":
		return syscall.ENOSPC
	case "EIO":
		return syscall.EIO
	case "EINTR":
		return syscall.EINTR
	case "EXDEV":
		return syscall.EXDEV
	case "ENOTSUP":
		return syscall.ENOTSUP
	case "EACCES":
		return syscall.EACCES
	case "EPERM":
		return syscall.EPERM
	case "ENXIO":
		return syscall.ENXIO
	case "ENOTCONN":
		return syscall.ENOTCONN
	case "ENODEV":
		return syscall.ENODEV
	}
	return syscall.EIO
}

// match counts the call against every fault for op and path, and returns
// those that apply to it (Nth reached, or every call).
func (s *FaultSet) match(op Op, path string) []*Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	var hit []*Fault
	for _, f := range s.faults {
		if f.Op != op || (f.PathHas != "" && !strings.Contains(path, f.PathHas)) || (f.PathIs != "" && path != f.PathIs) {
			continue
		}
		f.calls++
		if f.Nth == 0 || f.calls == f.Nth {
			hit = append(hit, f)
		}
	}
	return hit
}

// inject runs the Then of every fault that applies to the call and returns
// the error of the first that has one.
func (s *FaultSet) inject(op Op, path string) error {
	var err error
	for _, f := range s.match(op, path) {
		if f.Then != nil {
			f.Then()
		}
		if err == nil && !f.Corrupt && !f.Short && f.Err != 0 {
			err = f.Err
		}
	}
	return err
}

// injectWrite runs the Then of the faults that apply to a write of p, up
// to the first that changes it or fails it, and applies that one;
// counting faults let it through.
func (s *FaultSet) injectWrite(path string, p []byte) ([]byte, error) {
	for _, f := range s.match(OpWrite, path) {
		if f.Then != nil {
			f.Then()
		}
		switch {
		case len(p) == 0:
			return p, nil
		case f.Corrupt:
			q := append([]byte(nil), p...)
			q[0] ^= 0xff
			return q, nil
		case f.Short:
			return p[:len(p)/2], f.Err
		case f.Err != 0:
			return nil, f.Err
		}
	}
	return p, nil
}
